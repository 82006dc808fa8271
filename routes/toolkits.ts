// Toolkits (admin): list, create, read, update, delete, and the system-toolkit sync.
import { Router } from 'express';
import { z } from 'zod';
import { syncReportResponse, toolkitResponse } from '../src/http/responses';
import { toolkitInputSchema, toolkitPatchSchema } from '../src/services/inputs';
import { describeRoutes } from './route-description';
import { pathId } from '../src/http/parse';
import type { RouteServices } from './route-services';

export function toolkitsRouter(tg: Pick<RouteServices, 'requireRole' | 'syncSystemToolkits' | 'toolkits'>): Router {
  const router = Router();
  router.use('/toolkits', tg.requireRole('admin'));

  router.get('/toolkits', async (_req, res) => {
    res.json(await tg.toolkits.list());
  });

  router.post('/toolkits/sync', async (_req, res) => {
    const report = await tg.syncSystemToolkits();
    res.json(report);
  });

  router.post('/toolkits', async (req, res) => {
    res.status(201).json(await tg.toolkits.create(req.body));
  });

  router.get('/toolkits/:toolkitId', async (req, res) => {
    res.json(await tg.toolkits.get(pathId(req.params, 'toolkitId')));
  });

  router.patch('/toolkits/:toolkitId', async (req, res) => {
    const id = pathId(req.params, 'toolkitId');
    res.json(await tg.toolkits.update(id, req.body));
  });

  router.delete('/toolkits/:toolkitId', async (req, res) => {
    await tg.toolkits.delete(pathId(req.params, 'toolkitId'));
    res.status(204).end();
  });
  return router;
}

export const toolkitsRoutes = describeRoutes('Tools and toolkits', [
  { method: 'get', path: '/toolkits', summary: 'List the toolkits', roles: ['admin'], success: { status: 200, description: 'Every toolkit, by id', schema: z.array(toolkitResponse) } },
  {
    method: 'post',
    path: '/toolkits/sync',
    summary: 'Sync the system toolkits',
    description: 'Creates All Tools and Default Tools when missing and rewrites All Tools to the manifest. Idempotent: run it on every deploy.',
    roles: ['admin'],
    success: { status: 200, description: 'What the sync found and changed', schema: syncReportResponse },
    errors: ['conflict'],
  },
  {
    method: 'post',
    path: '/toolkits',
    summary: 'Create a toolkit',
    description: 'Each member must be a registered tool; an unknown id is a 422 naming the id it most likely meant.',
    roles: ['admin'],
    body: toolkitInputSchema,
    success: { status: 201, description: 'The toolkit', schema: toolkitResponse },
    errors: ['conflict'],
  },
  { method: 'get', path: '/toolkits/:toolkitId', summary: 'Read a toolkit', roles: ['admin'], success: { status: 200, description: 'The toolkit', schema: toolkitResponse } },
  {
    method: 'patch',
    path: '/toolkits/:toolkitId',
    summary: 'Change a toolkit',
    description: "Any of the create fields. All Tools' members cannot be edited (409).",
    roles: ['admin'],
    body: toolkitPatchSchema,
    success: { status: 200, description: 'The toolkit, changed', schema: toolkitResponse },
    errors: ['conflict'],
  },
  {
    method: 'delete',
    path: '/toolkits/:toolkitId',
    summary: 'Delete a toolkit',
    description: 'Its attachments and their rules go with it. System toolkits cannot be deleted (409).',
    roles: ['admin'],
    success: { status: 204, description: 'Deleted' },
    errors: ['conflict'],
  },
]);
