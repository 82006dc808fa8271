// Attachments and gate rules (admin): grant a toolkit to an agent, change its terms, revoke.
import { Router } from 'express';
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
