// The enabled_tools migration over HTTP (admin): a dry run by default; `dry_run: false` applies it,
// verified inside its transaction. Answers the report either way.
import { Router } from 'express';
import { z } from 'zod';
import { parse } from '../src/http/parse';
import { migrateEnabledTools } from '../src/legacy/migrate-enabled-tools';
import type { RouteServices } from './route-services';

const migrationBody = z.strictObject({
  dry_run: z.boolean().default(true),
  map_typos: z.boolean().default(false),
});
export type EnabledToolsMigrationBody = z.infer<typeof migrationBody>;

export function migrationsRouter(tg: Pick<RouteServices, 'registry' | 'requireRole' | 'sequelize'>): Router {
  const router = Router();
  router.post('/migrations/enabled-tools', tg.requireRole('admin'), async (req, res) => {
    const body = parse(migrationBody, req.body ?? {}, 'body');
    const report = await migrateEnabledTools(tg.sequelize, tg.registry.manifest, { mode: body.dry_run ? 'dry_run' : 'apply', mapTypos: body.map_typos });
    res.json(report);
  });
  return router;
}
