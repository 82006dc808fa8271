// GET /metrics (outside /api): the toolgate's metrics in the Prometheus text format, for the metrics
// token or the admin token only.
import { Router } from 'express';
import { metricsAccess } from '../middleware/metrics-access';
import type { RouteServices } from './route-services';

export function metricsRouter(tg: Pick<RouteServices, 'metrics' | 'authenticate'>, options: { metricsToken?: string } = {}): Router {
  const router = Router();
  router.get('/metrics', metricsAccess({ metricsToken: options.metricsToken, authenticate: tg.authenticate }), async (_req, res) => {
    res.set('Content-Type', tg.metrics.contentType).set('Cache-Control', 'no-store').send(await tg.metrics.render());
  });
  return router;
}
