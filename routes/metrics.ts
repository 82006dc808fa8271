// GET /metrics (outside /api): the toolgate's metrics in the Prometheus text format, for the metrics
// token or the admin token only.
import { Router } from 'express';
import { describeRoutes } from './route-description';
import type { RouteServices } from './route-services';

export function metricsRouter(tg: Pick<RouteServices, 'metrics' | 'authenticate' | 'requireRole'>): Router {
  const router = Router();
  router.get('/metrics', tg.authenticate, tg.requireRole('metrics'), async (_req, res) => {
    res.set('Content-Type', tg.metrics.contentType).set('Cache-Control', 'no-store').send(await tg.metrics.render());
  });
  return router;
}

export const metricsRoutes = describeRoutes('Operations', [
  {
    method: 'get',
    path: '/metrics',
    summary: "The service's metrics",
    description:
      'Prometheus text format: decisions by outcome and reason, gate latency, the policy cache, the listener, tool calls by status, the pool. For the admin token or TOOLGATE_METRICS_TOKEN; no label carries a sender, a token or message text.',
    roles: ['metrics'],
    success: { status: 200, description: 'The metrics, as text/plain in the Prometheus exposition format' },
  },
]);
