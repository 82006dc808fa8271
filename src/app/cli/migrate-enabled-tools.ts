// `npm run migrate:enabled-tools -- --dry-run | --apply | --undo [--map-typos] [--json]`: the
// enabled_tools migration by hand. A dry run changes nothing; an apply commits only when the parity
// check passes; an undo removes what the migration made. The report goes to stdout.
import { parseArgs } from 'node:util';
import { pendingMigrations } from '../../db/migrate';
import { HttpError, ParityMismatchError } from '../../errors';
import { openCliDatabase } from './cli-database';
import { formatReport } from '../../legacy/format-report';
import { migrateEnabledTools } from '../../legacy/migrate-enabled-tools';
import { progressBar } from '../../legacy/progress-bar';
import type { MigrationReport } from '../../legacy/report';
import { undoEnabledTools } from '../../legacy/undo-enabled-tools';
import { runCli } from './run-cli';

const USAGE = `usage: npm run migrate:enabled-tools -- --dry-run | --apply | --undo [--map-typos] [--json]

  --dry-run    report what the migration would do; changes nothing
  --apply      migrate, verify parity inside the transaction, commit only if it holds
  --undo       remove the legacy grants and toolkits the migration made
  --map-typos  also grant the id each mistyped token most likely meant (dry run, apply)
  --json       print the report as JSON`;

class UsageError extends Error {}

type Mode = 'dry-run' | 'apply' | 'undo';

function readArgs(argv: string[]): { mode: Mode; mapTypos: boolean; json: boolean } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        'dry-run': { type: 'boolean', default: false },
        apply: { type: 'boolean', default: false },
        undo: { type: 'boolean', default: false },
        'map-typos': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const v = parsed.values;
  if (v.help) throw new UsageError('');
  const modes = (['dry-run', 'apply', 'undo'] as const).filter((m) => v[m]);
  if (modes.length !== 1)
    throw new UsageError(
      modes.length === 0 ? 'say what to do: --dry-run, --apply or --undo' : `choose one of ${modes.map((m) => `--${m}`).join(', ')}`,
    );
  const mode = modes[0]!;
  if (mode === 'undo' && v['map-typos']) throw new UsageError('--map-typos applies to --dry-run and --apply, not --undo');
  return { mode, mapTypos: v['map-typos'] === true, json: v.json === true };
}

async function main(): Promise<number> {
  let args;
  try {
    args = readArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    if (err.message) console.error(`migrate:enabled-tools: ${err.message}\n`);
    console.error(USAGE);
    return err.message ? 2 : 0;
  }
  const print = (report: MigrationReport) => console.log(args.json ? JSON.stringify(report, null, 2) : formatReport(report));
  const db = await openCliDatabase();
  const bar = progressBar();
  try {
    if (args.mode !== 'dry-run') {
      const pending = await pendingMigrations(db.sequelize);
      if (pending.length > 0) {
        console.error(
          `migrate:enabled-tools: ${pending.length} schema migration(s) are pending (${pending.join(', ')}): run npm run migrate, which applies them and then this migration.`,
        );
        return 1;
      }
    }
    const report =
      args.mode === 'undo'
        ? await undoEnabledTools(db.sequelize, db.manifest)
        : await migrateEnabledTools(db.sequelize, db.manifest, {
            mode: args.mode === 'apply' ? 'apply' : 'dry_run',
            mapTypos: args.mapTypos,
            onProgress: bar.update,
          });
    bar.stop();
    print(report);
    return 0;
  } catch (err) {
    bar.stop();
    if (err instanceof ParityMismatchError) print(err.report);
    console.error(`migrate:enabled-tools failed: ${err instanceof HttpError || err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    await db.close();
  }
}

runCli('migrate:enabled-tools', main);
