// GET /healthz (the process is up) and GET /readyz (the database answers and no migration is
// pending): outside /api, for load balancers.
import type { Sequelize } from 'sequelize';
import { z } from 'zod';
import { pendingMigrations } from '../src/db/migrate';
import { routeSection } from './route';

export const healthRoutes = routeSection<{ sequelize: Sequelize }>('Health', (route) => [
  route({
    method: 'get',
    path: '/healthz',
    summary: 'The process is up',
    roles: 'anyone',
    success: { status: 200, description: 'Up', schema: z.object({ status: z.literal('ok') }) },
    handle: () => ({ status: 'ok' }),
  }),
  route({
    method: 'get',
    path: '/readyz',
    summary: 'Ready to serve',
    description: 'The database answers and no migration is pending; otherwise a 503 saying which.',
    roles: 'anyone',
    success: { status: 200, description: 'Ready', schema: z.object({ status: z.literal('ready') }) },
    errors: ['unavailable'],
    handle: async (tg, { res }) => {
      try {
        await tg.sequelize.query('SELECT 1');
      } catch {
        res.status(503).json({ status: 'unavailable', detail: 'The database cannot be reached.', code: 'unavailable' });
        return undefined;
      }
      const pending = await pendingMigrations(tg.sequelize);
      if (pending.length > 0) {
        res.status(503).json({ status: 'migrating', detail: `Migrations pending: ${pending.join(', ')}.`, code: 'unavailable', pending });
        return undefined;
      }
      return { status: 'ready' };
    },
  }),
]);
