// Attachments and gate rules (admin): grant a toolkit to an agent, change its terms, revoke.
import { Router } from 'express';
import { z } from 'zod';
import { attachmentResponse, ruleResponse } from '../src/http/responses';
import { attachInputSchema, attachmentPatchSchema, ruleSchema } from '../src/services/inputs';
import { describeRoutes } from './route-description';
import { pathId } from '../src/http/parse';
import type { RouteServices } from './route-services';

export function attachmentsRouter(tg: Pick<RouteServices, 'attachments' | 'requireRole'>): Router {
  const router = Router();
  const admin = tg.requireRole('admin');
  const ids = (params: Record<string, unknown>) => ({
    agentId: pathId(params, 'id'),
    attachmentId: params.attachmentId === undefined ? 0 : pathId(params, 'attachmentId'),
  });

  router.get('/agents/:id/toolkits', admin, async (req, res) => {
    res.json(await tg.attachments.list(ids(req.params).agentId));
  });

  router.post('/agents/:id/toolkits', admin, async (req, res) => {
    const { agentId } = ids(req.params);
    res.status(201).json(await tg.attachments.attach(agentId, req.body));
  });

  router.get('/agents/:id/toolkits/:attachmentId', admin, async (req, res) => {
    const { agentId, attachmentId } = ids(req.params);
    res.json(await tg.attachments.get(agentId, attachmentId));
  });

  router.patch('/agents/:id/toolkits/:attachmentId', admin, async (req, res) => {
    const { agentId, attachmentId } = ids(req.params);
    res.json(await tg.attachments.update(agentId, attachmentId, req.body));
  });

  router.delete('/agents/:id/toolkits/:attachmentId', admin, async (req, res) => {
    const { agentId, attachmentId } = ids(req.params);
    await tg.attachments.detach(agentId, attachmentId);
    res.status(204).end();
  });

  router.post('/agents/:id/toolkits/:attachmentId/rules', admin, async (req, res) => {
    const { agentId, attachmentId } = ids(req.params);
    res.status(201).json(await tg.attachments.addRule(agentId, attachmentId, req.body));
  });

  router.delete('/agents/:id/toolkits/:attachmentId/rules/:ruleId', admin, async (req, res) => {
    const { agentId, attachmentId } = ids(req.params);
    await tg.attachments.deleteRule(agentId, attachmentId, pathId(req.params, 'ruleId'));
    res.status(204).end();
  });
  return router;
}

export const attachmentsRoutes = describeRoutes('Attachments and gate rules', [
  {
    method: 'get',
    path: '/agents/:id/toolkits',
    summary: "An agent's attachments",
    roles: ['admin'],
    success: { status: 200, description: 'Each attachment with its toolkit, terms and rules', schema: z.array(attachmentResponse) },
  },
  {
    method: 'post',
    path: '/agents/:id/toolkits',
    summary: 'Attach a toolkit to an agent',
    description: 'Patterns are normalized (SEMANTICS §4); a bad one is a 422 saying why.',
    roles: ['admin'],
    body: attachInputSchema,
    success: { status: 201, description: 'The attachment', schema: attachmentResponse },
    errors: ['conflict'],
  },
  { method: 'get', path: '/agents/:id/toolkits/:attachmentId', summary: 'Read an attachment', roles: ['admin'], success: { status: 200, description: 'The attachment', schema: attachmentResponse } },
  {
    method: 'patch',
    path: '/agents/:id/toolkits/:attachmentId',
    summary: "Change an attachment's terms",
    description: '`rules`, when given, replaces the whole list.',
    roles: ['admin'],
    body: attachmentPatchSchema,
    success: { status: 200, description: 'The attachment, changed', schema: attachmentResponse },
  },
  { method: 'delete', path: '/agents/:id/toolkits/:attachmentId', summary: 'Detach (revoke the grant)', roles: ['admin'], success: { status: 204, description: 'Detached' } },
  {
    method: 'post',
    path: '/agents/:id/toolkits/:attachmentId/rules',
    summary: 'Add a gate rule',
    roles: ['admin'],
    body: ruleSchema,
    success: { status: 201, description: 'The rule, its pattern normalized', schema: ruleResponse },
    errors: ['conflict'],
  },
  { method: 'delete', path: '/agents/:id/toolkits/:attachmentId/rules/:ruleId', summary: 'Remove a gate rule', roles: ['admin'], success: { status: 204, description: 'Removed' } },
]);
