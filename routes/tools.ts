// GET /tools: the manifest, as the dashboard's checklist shows it.
import { Router } from 'express';
import type { RouteServices } from './route-services';

export function toolsRouter(tg: Pick<RouteServices, 'registry' | 'requireRole'>): Router {
  const router = Router();
  router.get('/tools', tg.requireRole('admin'), (_req, res) => {
    res.json(tg.registry.manifest.list());
  });
  return router;
}
