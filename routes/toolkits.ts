// Toolkits (admin): list, create, read, update, delete, and the system-toolkit sync.
import { Router } from 'express';
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
