// GET /healthz (the process is up) and GET /readyz (the database answers and no migration is
// pending): outside /api, for load balancers.
import { Router } from 'express';
import { pendingMigrations } from '../src/db/migrate';
import type { Sequelize } from 'sequelize';

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
