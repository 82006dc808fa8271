// `npm run migrate`: the deploy path. Applies the schema migrations (adopting a legacy database in
// place), then the enabled_tools data migration, verified inside its transaction. Safe to run on
// every deploy: a second run changes nothing, and agents the legacy application added since are
// picked up. `--json` prints the data migration's report as JSON.
import { parseArgs } from 'node:util';
import { migrateUp } from '../db/migrate';
import { openCliDatabase } from '../legacy/cli-database';
import { ParityMismatchError } from '../legacy/errors';
import { formatReport } from '../legacy/format-report';
import { migrateEnabledTools } from '../legacy/migrate-enabled-tools';
import { progressBar } from '../legacy/progress-bar';
import { runCli } from './run-cli';

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { json: { type: 'boolean', default: false } }, strict: true });
  const db = await openCliDatabase();
  const bar = progressBar();
  try {
    const applied = await migrateUp(db.sequelize);
    if (!values.json) console.log(applied.length > 0 ? `Schema migrations applied: ${applied.join(', ')}` : 'Schema: up to date.');
    const report = await migrateEnabledTools(db.sequelize, db.manifest, { mode: 'apply', onProgress: bar.update });
    bar.stop();
    console.log(values.json ? JSON.stringify({ schema_migrations_applied: applied, enabled_tools: report }, null, 2) : `\n${formatReport(report)}`);
    return 0;
  } catch (err) {
    bar.stop();
    if (err instanceof ParityMismatchError) console.log(values.json ? JSON.stringify({ enabled_tools: err.report }, null, 2) : formatReport(err.report));
    console.error(`migrate failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    await db.close();
  }
}

runCli('migrate', main);
