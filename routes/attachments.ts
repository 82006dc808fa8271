// Attachments and gate rules (admin): grant a toolkit to an agent, change its terms, revoke.
import { z } from 'zod';
import { attachmentResponse, ruleResponse } from './responses';
import { attachInputSchema, attachmentPatchSchema, ruleSchema } from '../src/services/inputs';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

export const attachmentsRoutes = routeSection<Pick<RouteServices, 'attachments'>>('Attachments and gate rules', (route) => [
  route({
    method: 'get',
    path: '/agents/:id/toolkits',
    summary: "An agent's attachments",
    roles: ['admin'],
    success: { status: 200, description: 'Each attachment with its toolkit, terms and rules', schema: z.array(attachmentResponse) },
    handle: (tg, { ids }) => tg.attachments.list(ids.id),
  }),
  route({
    method: 'post',
    path: '/agents/:id/toolkits',
    summary: 'Attach a toolkit to an agent',
    description: 'Patterns are normalized (SEMANTICS §4); a bad one is a 422 saying why.',
    roles: ['admin'],
    body: attachInputSchema,
    success: { status: 201, description: 'The attachment', schema: attachmentResponse },
    errors: ['conflict'],
    handle: (tg, { ids, req }) => tg.attachments.attach(ids.id, req.body),
  }),
  route({
    method: 'get',
    path: '/agents/:id/toolkits/:attachmentId',
    summary: 'Read an attachment',
    roles: ['admin'],
    success: { status: 200, description: 'The attachment', schema: attachmentResponse },
    handle: (tg, { ids }) => tg.attachments.get(ids.id, ids.attachmentId),
  }),
  route({
    method: 'patch',
    path: '/agents/:id/toolkits/:attachmentId',
    summary: "Change an attachment's terms",
    description: '`rules`, when given, replaces the whole list.',
    roles: ['admin'],
    body: attachmentPatchSchema,
    success: { status: 200, description: 'The attachment, changed', schema: attachmentResponse },
    handle: (tg, { ids, req }) => tg.attachments.update(ids.id, ids.attachmentId, req.body),
  }),
  route({
    method: 'delete',
    path: '/agents/:id/toolkits/:attachmentId',
    summary: 'Detach (revoke the grant)',
    roles: ['admin'],
    success: { status: 204, description: 'Detached' },
    handle: async (tg, { ids }) => {
      await tg.attachments.detach(ids.id, ids.attachmentId);
    },
  }),
  route({
    method: 'post',
    path: '/agents/:id/toolkits/:attachmentId/rules',
    summary: 'Add a gate rule',
    roles: ['admin'],
    body: ruleSchema,
    success: { status: 201, description: 'The rule, its pattern normalized', schema: ruleResponse },
    errors: ['conflict'],
    handle: (tg, { ids, req }) => tg.attachments.addRule(ids.id, ids.attachmentId, req.body),
  }),
  route({
    method: 'delete',
    path: '/agents/:id/toolkits/:attachmentId/rules/:ruleId',
    summary: 'Remove a gate rule',
    roles: ['admin'],
    success: { status: 204, description: 'Removed' },
    handle: async (tg, { ids }) => {
      await tg.attachments.deleteRule(ids.id, ids.attachmentId, ids.ruleId);
    },
  }),
]);
