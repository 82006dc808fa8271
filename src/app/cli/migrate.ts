// `npm run migrate`: the deploy path. Applies the schema migrations, then the enabled_tools data
// migration, verified inside its transaction. Safe to run on every deploy: a second run changes
// nothing, and agents the legacy application added since are picked up. `--json` prints the data
// migration's report as JSON. `--adopt-legacy-tables` (or TOOLGATE_ADOPT_LEGACY_TABLES=on) adopts
// the legacy application's tables in place; without it, a table of one of toolgate's names that
// toolgate did not create stops the run before anything changes.
//
// `npm run migrate -- --undo [--force]` is the way back (docs/MIGRATING.md, src/db/undo-schema.ts):
// refused while an instance is alive on the database, unless forced; then toolgate's rows out of
// the legacy tables, every schema migration reverted, and SequelizeMeta (and toolgate's own schema)
// dropped once empty, so the legacy database is left as it was before the first `npm run migrate`,
// with what the legacy application wrote since.
import { parseArgs } from 'node:util';
import type { Sequelize } from 'sequelize';
import { InstancesAliveError } from '../../db/live-instances';
import { migrateUp } from '../../db/migrate';
import { undoSchema, type UndoReport } from '../../db/undo-schema';
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
      force: { type: 'boolean', default: false },
      'adopt-legacy-tables': { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.force && !values.undo) throw new Error('--force goes with --undo only');
  const db = await openCliDatabase();
  if (values.undo) {
    try {
      return await undo(db.sequelize, values.json, values.force);
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

async function undo(sequelize: Sequelize, json: boolean, force: boolean): Promise<number> {
  let report: UndoReport;
  try {
    report = await undoSchema(sequelize, { force });
  } catch (err) {
    if (!(err instanceof InstancesAliveError)) throw err;
    if (json) console.log(JSON.stringify({ refused: err.code, instances: err.instances }, null, 2));
    console.error(`migrate --undo refused: ${err.message}`);
    return 1;
  }
  if (json) {
    console.log(JSON.stringify(report, null, 2));
    return 0;
  }
  for (const i of report.forced_past)
    console.log(
      `Forced past ${i.id}${i.hostname ? ` on ${i.hostname}` : ''}${i.pid ? ` (pid ${i.pid})` : ''}: it now answers 503 tables_missing.`,
    );
  for (const a of report.adopted_rows) {
    console.log(
      a.removed === null
        ? `${a.table}: no column of toolgate's tells its rows apart (the table had them before toolgate), so every row was kept.`
        : `${a.table}: ${a.removed} row(s) toolgate wrote removed (those with ${a.by.join(' or ')}); the legacy application's rows kept.`,
    );
  }
  const reverted = report.schema_migrations_reverted;
  console.log(reverted.length > 0 ? `Schema migrations reverted: ${reverted.join(', ')}` : 'Schema: no toolgate migration to revert.');
  console.log(
    report.sequelize_meta === 'dropped'
      ? "SequelizeMeta dropped: it held only toolgate's migrations, and none is applied now."
      : report.sequelize_meta === 'kept'
        ? "SequelizeMeta kept: it still names migrations that are not toolgate's."
        : 'SequelizeMeta: absent.',
  );
  if (report.schema) {
    const { name, result } = report.schema;
    console.log(
      result === 'dropped'
        ? `Schema ${name} dropped: nothing was left in it.`
        : result === 'kept'
          ? `Schema ${name} kept: it still holds what toolgate did not make (the demo's seeder records or tables, say).`
          : `Schema ${name}: absent.`,
    );
  }
  return 0;
}

runCli('migrate', main);
