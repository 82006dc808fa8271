// Attachments and gate rules (admin): grant a toolkit to an agent, change its terms, revoke.
import { Router } from 'express';
import { z } from 'zod';
import { parse, pathId } from '../src/http/parse';
import { bodyId, ruleSchema, rulesSchema } from '../src/http/schemas';
import type { Toolgate } from '../src/toolgate';

const attachBody = z.strictObject({
  toolkit_id: bodyId,
  allow_proactive: z.boolean().optional(),
  rules: rulesSchema.optional(),
});

const attachmentPatch = attachBody.omit({ toolkit_id: true });

export function attachmentsRouter(tg: Toolgate): Router {
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
    const body = parse(attachBody, req.body, 'body');
    res.status(201).json(await tg.attachments.attach(agentId, body));
  });

  router.get('/agents/:id/toolkits/:attachmentId', admin, async (req, res) => {
    const { agentId, attachmentId } = ids(req.params);
    res.json(await tg.attachments.get(agentId, attachmentId));
  });

  router.patch('/agents/:id/toolkits/:attachmentId', admin, async (req, res) => {
    const { agentId, attachmentId } = ids(req.params);
    const body = parse(attachmentPatch, req.body, 'body');
    res.json(await tg.attachments.update(agentId, attachmentId, body));
  });

  router.delete('/agents/:id/toolkits/:attachmentId', admin, async (req, res) => {
    const { agentId, attachmentId } = ids(req.params);
    await tg.attachments.detach(agentId, attachmentId);
    res.status(204).end();
  });

  router.post('/agents/:id/toolkits/:attachmentId/rules', admin, async (req, res) => {
    const { agentId, attachmentId } = ids(req.params);
    const body = parse(ruleSchema, req.body, 'body');
    res.status(201).json(await tg.attachments.addRule(agentId, attachmentId, body));
  });

  router.delete('/agents/:id/toolkits/:attachmentId/rules/:ruleId', admin, async (req, res) => {
    const { agentId, attachmentId } = ids(req.params);
    await tg.attachments.deleteRule(agentId, attachmentId, pathId(req.params, 'ruleId'));
    res.status(204).end();
  });
  return router;
}
