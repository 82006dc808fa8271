// The enabled_tools migration over HTTP (admin): a dry run by default; `dry_run: false` applies it,
// verified inside its transaction. Answers the report either way.
import { z } from 'zod';
import { migrateEnabledTools } from '../src/legacy/migrate-enabled-tools';
import { migrationReportSchema } from '../src/legacy/report';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

export const migrationBody = z.strictObject({
  dry_run: z.boolean().default(true),
  map_typos: z.boolean().default(false),
});

export type EnabledToolsMigrationBody = z.infer<typeof migrationBody>;

export const migrationsRoutes = routeSection<Pick<RouteServices, 'registry' | 'sequelize'>>('The enabled_tools migration', (route) => [
  route({
    method: 'post',
    path: '/migrations/enabled-tools',
    summary: "Migrate agents' enabled_tools strings to toolkits",
    description:
      'A dry run by default; `dry_run: false` applies it, verified inside its transaction, and commits only when every check passes.',
    roles: ['admin'],
    body: migrationBody,
    bodyRequired: false,
    success: { status: 200, description: "The migration's report", schema: migrationReportSchema },
    errors: ['parity_mismatch', 'schema_not_migrated', 'migration_busy'],
    handle: (tg, { body }) =>
      migrateEnabledTools(tg.sequelize, tg.registry.manifest, { mode: body.dry_run ? 'dry_run' : 'apply', mapTypos: body.map_typos }),
  }),
]);
