// GET /metrics (outside /api): the toolgate's metrics in the Prometheus text format, for the metrics
// token or the admin token only.
import { routeSection } from './route';
import type { RouteServices } from './route-services';

export const metricsRoutes = routeSection<Pick<RouteServices, 'metrics'>>('Operations', (route) => [
  route({
    method: 'get',
    path: '/metrics',
    summary: "The service's metrics",
    description:
      'Prometheus text format: decisions by outcome and reason, gate latency, the policy cache, the listener, tool calls by status, the pool. For the admin token or TOOLGATE_METRICS_TOKEN; no label carries a sender, a token or message text.',
    roles: ['metrics'],
    success: { status: 200, description: 'The metrics, as text/plain in the Prometheus exposition format' },
    handle: async (tg, { res }) => {
      res
        .set('Content-Type', tg.metrics.contentType)
        .set('Cache-Control', 'no-store')
        .send(await tg.metrics.render());
    },
  }),
]);
