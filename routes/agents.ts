// Agents: create/update/delete (admin), read (admin or client).
import { Router } from 'express';
import { pathId } from '../src/http/parse';
import type { RouteServices } from './route-services';

export function agentsRouter(tg: Pick<RouteServices, 'agents' | 'requireRole'>): Router {
  const router = Router();

  router.get('/agents', tg.requireRole('admin', 'client'), async (_req, res) => {
    res.json(await tg.agents.list());
  });

  router.get('/agents/:id', tg.requireRole('admin', 'client'), async (req, res) => {
    res.json(await tg.agents.get(pathId(req.params, 'id')));
  });

  router.post('/agents', tg.requireRole('admin'), async (req, res) => {
    res.status(201).json(await tg.agents.create(req.body));
  });

  router.patch('/agents/:id', tg.requireRole('admin'), async (req, res) => {
    const id = pathId(req.params, 'id');
    // HTTP.md answers an agent's update with 204, as its delete; GET /agents/:id reads it back.
    await tg.agents.update(id, req.body);
    res.status(204).end();
  });

  router.delete('/agents/:id', tg.requireRole('admin'), async (req, res) => {
    await tg.agents.delete(pathId(req.params, 'id'));
    res.status(204).end();
  });
  return router;
}
