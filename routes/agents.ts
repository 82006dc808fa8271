// Agents: create/update/delete (admin), read (admin or client).
import { Router } from 'express';
import { z } from 'zod';
import { parse, pathId } from '../src/http/parse';
import { bodyId, name, text } from '../src/http/schemas';
import type { Toolgate } from '../src/toolgate';

const agentBody = z.strictObject({
  name: name(200),
  description: text(10_000).nullable().optional(),
  system_prompt: text(100_000).nullable().optional(),
  // The legacy string, taken as legacy clients send it (even odd spacing); bounded, one line.
  enabled_tools: text(10_000).nullable().optional(),
  toolkit_ids: z.array(bodyId).max(100, 'at most 100 toolkits').optional(),
});

export function agentsRouter(tg: Toolgate): Router {
  const router = Router();

  router.get('/agents', tg.requireRole('admin', 'client'), async (_req, res) => {
    res.json(await tg.agents.list());
  });

  router.get('/agents/:id', tg.requireRole('admin', 'client'), async (req, res) => {
    res.json(await tg.agents.get(pathId(req.params, 'id')));
  });

  router.post('/agents', tg.requireRole('admin'), async (req, res) => {
    const body = parse(agentBody, req.body, 'body');
    res.status(201).json(await tg.agents.create(body));
  });

  router.patch('/agents/:id', tg.requireRole('admin'), async (req, res) => {
    const id = pathId(req.params, 'id');
    const body = parse(agentBody.omit({ toolkit_ids: true }).partial(), req.body, 'body');
    // HTTP.md answers an agent's update with 204, as its delete; GET /agents/:id reads it back.
    await tg.agents.update(id, body);
    res.status(204).end();
  });

  router.delete('/agents/:id', tg.requireRole('admin'), async (req, res) => {
    await tg.agents.delete(pathId(req.params, 'id'));
    res.status(204).end();
  });
  return router;
}
