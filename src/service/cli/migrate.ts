// `npm run migrate`: the deploy path. Applies the schema migrations, then the enabled_tools data
// migration, verified inside its transaction. Safe to run on every deploy: a second run changes
// nothing, and agents the legacy application added since are picked up. `--json` prints the data
// migration's report as JSON. `--adopt-legacy-tables` (or TOOLGATE_ADOPT_LEGACY_TABLES=on) adopts
// the legacy application's tables in place; without it, a table of one of toolgate's names that
// toolgate did not create stops the run before anything changes.
//
// `npm run migrate -- --undo` is the way back (docs/MIGRATING.md): every schema migration reverted,
// then the bookkeeping table SequelizeMeta dropped once it is empty, so the legacy database is left
// as it was before the first `npm run migrate`, with what the legacy application wrote since.
import { parseArgs } from 'node:util';
import { QueryTypes, type Sequelize } from 'sequelize';
import { migrateDown, migrateUp, withMigrationLock } from '../../db/migrate';
import { schemaOf } from '../../db/schema';
import { dropSchemaIfEmpty } from '../../db/schema-setup';
import { ParityMismatchError } from '../../errors';
import { openCliDatabase } from './cli-database';
import { formatReport } from '../../legacy/format-report';
import { migrateEnabledTools } from '../../legacy/migrate-enabled-tools';
import { progressBar } from '../../legacy/progress-bar';
import { runCli } from './run-cli';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean', default: false },
      undo: { type: 'boolean', default: false },
      'adopt-legacy-tables': { type: 'boolean', default: false },
    },
    strict: true,
  });
  const db = await openCliDatabase();
  if (values.undo) {
    try {
      return await undo(db.sequelize, values.json);
    } finally {
      await db.close();
    }
  }
  const bar = progressBar();
  try {
    const applied = await migrateUp(db.sequelize, { adoptLegacyTables: values['adopt-legacy-tables'] || db.config.adoptLegacyTables });
    if (!values.json) console.log(applied.length > 0 ? `Schema migrations applied: ${applied.join(', ')}` : 'Schema: up to date.');
    const report = await migrateEnabledTools(db.sequelize, db.manifest, { mode: 'apply', onProgress: bar.update });
    bar.stop();
    console.log(
      values.json ? JSON.stringify({ schema_migrations_applied: applied, enabled_tools: report }, null, 2) : `\n${formatReport(report)}`,
    );
    return 0;
  } catch (err) {
    bar.stop();
    if (err instanceof ParityMismatchError)
      console.log(values.json ? JSON.stringify({ enabled_tools: err.report }, null, 2) : formatReport(err.report));
    console.error(`migrate failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    await db.close();
  }
}

async function undo(sequelize: Sequelize, json: boolean): Promise<number> {
  // Reverting the tables toolgate created drops the grants and toolkits in them, so the data
  // migration's own undo has nothing to add here.
  const reverted = await migrateDown(sequelize, { to: 0 });
  const bookkeeping = await dropEmptyBookkeeping(sequelize);
  // toolgate's own schema (TOOLGATE_DB_SCHEMA), which migrate made: gone once nothing is left in it.
  const schema = schemaOf(sequelize);
  const ownSchema = schema === null ? undefined : await withMigrationLock(sequelize, () => dropSchemaIfEmpty(sequelize, schema));
  if (json) {
    console.log(
      JSON.stringify(
        {
          schema_migrations_reverted: reverted,
          sequelize_meta: bookkeeping,
          ...(schema === null ? {} : { schema: { name: schema, result: ownSchema } }),
        },
        null,
        2,
      ),
    );
    return 0;
  }
  console.log(reverted.length > 0 ? `Schema migrations reverted: ${reverted.join(', ')}` : 'Schema: no toolgate migration to revert.');
  console.log(
    bookkeeping === 'dropped'
      ? "SequelizeMeta dropped: it held only toolgate's migrations, and none is applied now."
      : bookkeeping === 'kept'
        ? "SequelizeMeta kept: it still names migrations that are not toolgate's."
        : 'SequelizeMeta: absent.',
  );
  if (schema !== null) {
    console.log(
      ownSchema === 'dropped'
        ? `Schema ${schema} dropped: nothing was left in it.`
        : ownSchema === 'kept'
          ? `Schema ${schema} kept: it still holds what toolgate did not make (the demo's seeder records or tables, say).`
          : `Schema ${schema}: absent.`,
    );
  }
  return 0;
}

/** Drops SequelizeMeta when no row is left in it: one with rows records another application's migrations. */
async function dropEmptyBookkeeping(sequelize: Sequelize): Promise<'dropped' | 'kept' | 'absent'> {
  return withMigrationLock(sequelize, () =>
    sequelize.transaction(async (transaction) => {
      const [table] = await sequelize.query<{ present: boolean }>(`SELECT to_regclass('"SequelizeMeta"') IS NOT NULL AS present`, {
        type: QueryTypes.SELECT,
        transaction,
      });
      if (!table?.present) return 'absent';
      await sequelize.query('LOCK TABLE "SequelizeMeta" IN ACCESS EXCLUSIVE MODE', { transaction });
      const left = await sequelize.query('SELECT 1 FROM "SequelizeMeta" LIMIT 1', { type: QueryTypes.SELECT, transaction });
      if (left.length > 0) return 'kept';
      await sequelize.query('DROP TABLE "SequelizeMeta"', { transaction });
      return 'dropped';
    }),
  );
}

runCli('migrate', main);
