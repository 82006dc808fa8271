// Toolkits (admin): list, create, read, update, delete, and the system-toolkit sync.
import { z } from 'zod';
import { syncReportSchema } from '../src/services/system-toolkits';
import { toolkitInputSchema, toolkitPatchSchema, toolkitViewSchema } from '../src/services/toolkits';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

export const toolkitsRoutes = routeSection<Pick<RouteServices, 'syncSystemToolkits' | 'toolkits'>>('Tools and toolkits', (route) => [
  route({
    method: 'get',
    path: '/toolkits',
    summary: 'List the toolkits',
    roles: ['admin'],
    success: { status: 200, description: 'Every toolkit, by id', schema: z.array(toolkitViewSchema) },
    handle: (tg) => tg.toolkits.list(),
  }),
  route({
    method: 'post',
    path: '/toolkits/sync',
    summary: 'Sync the system toolkits',
    description:
      'Creates All Tools and Default Tools when missing and rewrites All Tools to the manifest. Idempotent: run it on every deploy.',
    roles: ['admin'],
    success: { status: 200, description: 'What the sync found and changed', schema: syncReportSchema },
    errors: ['conflict'],
    handle: (tg) => tg.syncSystemToolkits(),
  }),
  route({
    method: 'post',
    path: '/toolkits',
    summary: 'Create a toolkit',
    description: 'Each member must be a registered tool; an unknown id is a 422 naming the id it most likely meant.',
    roles: ['admin'],
    body: toolkitInputSchema,
    success: { status: 201, description: 'The toolkit', schema: toolkitViewSchema },
    errors: ['conflict'],
    handle: (tg, { body }) => tg.toolkits.create(body),
  }),
  route({
    method: 'get',
    path: '/toolkits/:toolkitId',
    summary: 'Read a toolkit',
    roles: ['admin'],
    success: { status: 200, description: 'The toolkit', schema: toolkitViewSchema },
    handle: (tg, { ids }) => tg.toolkits.get(ids.toolkitId),
  }),
  route({
    method: 'patch',
    path: '/toolkits/:toolkitId',
    summary: 'Change a toolkit',
    description: "Any of the create fields. All Tools' members cannot be edited (409).",
    roles: ['admin'],
    body: toolkitPatchSchema,
    success: { status: 200, description: 'The toolkit, changed', schema: toolkitViewSchema },
    errors: ['conflict'],
    handle: (tg, { ids, body }) => tg.toolkits.update(ids.toolkitId, body),
  }),
  route({
    method: 'delete',
    path: '/toolkits/:toolkitId',
    summary: 'Delete a toolkit',
    description: 'Its attachments and their rules go with it. System toolkits cannot be deleted (409).',
    roles: ['admin'],
    success: { status: 204, description: 'Deleted' },
    errors: ['conflict'],
    handle: async (tg, { ids }) => {
      await tg.toolkits.delete(ids.toolkitId);
    },
  }),
]);
