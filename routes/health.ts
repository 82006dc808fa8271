// GET /healthz (the process is up) and GET /readyz (the database answers and no migration is
// pending): outside /api, for load balancers.
import { Router } from 'express';
import { pendingMigrations } from '../src/db/migrate';
import type { Sequelize } from 'sequelize';
import { healthResponse, readyResponse } from '../src/http/responses';
import { describeRoutes } from './route-description';

export function healthRouter(tg: { sequelize: Sequelize }): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    try {
      await tg.sequelize.query('SELECT 1');
    } catch {
      res.status(503).json({ status: 'unavailable', detail: 'The database cannot be reached.', code: 'unavailable' });
      return;
    }
    const pending = await pendingMigrations(tg.sequelize);
    if (pending.length > 0) {
      res.status(503).json({ status: 'migrating', detail: `Migrations pending: ${pending.join(', ')}.`, code: 'unavailable', pending });
      return;
    }
    res.json({ status: 'ready' });
  });
  return router;
}

export const healthRoutes = describeRoutes('Health', [
  { method: 'get', path: '/healthz', summary: 'The process is up', roles: 'anyone', success: { status: 200, description: 'Up', schema: healthResponse } },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Ready to serve',
    description: 'The database answers and no migration is pending; otherwise a 503 saying which.',
    roles: 'anyone',
    success: { status: 200, description: 'Ready', schema: readyResponse },
    errors: ['unavailable'],
  },
]);
