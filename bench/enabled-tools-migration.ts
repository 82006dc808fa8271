// `npm run bench:migration`: the enabled_tools migration over a large legacy table. Fills agents
// with legacy strings (the spellings real data holds), then times a dry run, the apply (plan and
// write, then the parity check inside the transaction), a second apply and an undo, sampling
// process.memoryUsage() throughout. Two table sizes side by side show that memory does not grow
// with the table. Prints figures; never passes or fails. Runs on a throwaway embedded PostgreSQL
// and, when DATABASE_URL is set, on that server too, side by side, each with its JIT settings named.
// `-- --agents 1000000` (or `--agents 20000,100000`) picks the sizes; `--only url|embedded` one server.
// `-- --via-cli` times the deploy path instead, `npm run migrate` as an operator runs it, in child
// processes (bench/migration-via-cli.ts); `--rounds N` repeats it, each round on a fresh database.
import os from 'node:os';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Sequelize } from 'sequelize';
import { createManifest } from '../src/core/tool-manifest';
import { createSequelize } from '../src/db/connect';
import { ensureDatabase, withClient, withDatabase } from '../src/db/database-url';
import { quoteIdent } from '../src/db/quote-ident';
import { migrateUp } from '../src/db/migrate';
import { migrateEnabledTools, type MigrationProgress } from '../src/legacy/migrate-enabled-tools';
import type { MigrationReport } from '../src/legacy/report';
import { undoEnabledTools } from '../src/legacy/undo-enabled-tools';
import { benchViaCli } from './migration-via-cli';
import { withEmbeddedServer } from './postgres-server';

const SIZES = [20_000, 100_000];
const SAMPLE_EVERY_MS = 20;

// What legacy strings look like in bulk: clean, spaced, trailing and doubled commas, duplicates,
// case and hyphen variants, unknown tools, empty, null, and now and then a very long one.
const STRINGS: (string | null)[] = [
  'email_analyzer,task_creator',
  ' email_analyzer , task_creator ',
  'email_analyzer,task_creator,',
  'email_analyzer,,document_search',
  'email_analyzer,email_analyzer,task_creator',
  'Email_Analyzer,task_creator',
  'email-analyzer',
  'email_analyzer,calendar_sync',
  'document_serach,reply_generator',
  '',
  null,
  'email_analyzer,task_creator,document_search,reply_generator',
  'document_search',
  'email_analyzer',
  `email_analyzer,${'task_creator,'.repeat(200)}`,
];

interface Peak {
  rss: number;
  heapUsed: number;
}

/** Samples memory until stopped; `take()` returns the peak since the last take. */
function memorySampler(): { take(): Peak; stop(): void } {
  let peak: Peak = { rss: 0, heapUsed: 0 };
  const sample = () => {
    const m = process.memoryUsage();
    peak = { rss: Math.max(peak.rss, m.rss), heapUsed: Math.max(peak.heapUsed, m.heapUsed) };
  };
  const timer = setInterval(sample, SAMPLE_EVERY_MS);
  return {
    take() {
      sample();
      const taken = peak;
      peak = { rss: 0, heapUsed: 0 };
      return taken;
    },
    stop: () => clearInterval(timer),
  };
}

// A peak sampled on a timer includes garbage V8 has not collected yet, which grows with the work
// done, not with what is kept. The live heap is measured apart: a last apply that collects garbage
// at every batch boundary and records what survives.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function fillLegacyAgents(sequelize: Sequelize, count: number): Promise<void> {
  // Multi-row INSERTs of 5,000 agents each, as a legacy table would be loaded.
  for (let first = 0; first < count; first += 5000) {
    const n = Math.min(5000, count - first);
    const names = Array.from({ length: n }, (_, i) => `Agent ${first + i + 1}`);
    const strings = names.map((_, i) => STRINGS[(first + i) % STRINGS.length] ?? null);
    await sequelize.query('INSERT INTO agents (name, enabled_tools) SELECT * FROM unnest($1::text[], $2::text[])', {
      bind: [names, strings],
    });
  }
}

interface PhaseResult {
  phase: string;
  ms: number;
  peak: Peak;
  note: string;
}

async function benchOneSize(adminUrl: string, count: number): Promise<PhaseResult[]> {
  const dbName = `toolgate_bench_migration_${process.pid}_${count}`;
  await ensureDatabase(adminUrl, dbName);
  const sequelize = createSequelize(withDatabase(adminUrl, dbName), { queryTimeoutMs: 0 });
  const manifest = createManifest();
  const results: PhaseResult[] = [];
  const memory = memorySampler();
  try {
    await migrateUp(sequelize);
    await fillLegacyAgents(sequelize, count);
    memory.take();

    const timed = async (phase: string, fn: () => Promise<MigrationReport>, note: (r: MigrationReport) => string) => {
      const started = performance.now();
      const report = await fn();
      results.push({ phase, ms: performance.now() - started, peak: memory.take(), note: note(report) });
      return report;
    };
    await timed(
      'dry run',
      () => migrateEnabledTools(sequelize, manifest, { mode: 'dry_run' }),
      (r) => `${r.agents.changed} to change, check ${r.verification.status}`,
    );

    // The apply's two halves apart: planning and writing, then the check before commit.
    let verifyStarted = 0;
    const onProgress = (p: MigrationProgress) => {
      if (p.phase === 'verify' && verifyStarted === 0) verifyStarted = performance.now();
    };
    const applyStarted = performance.now();
    const applied = await migrateEnabledTools(sequelize, manifest, { mode: 'apply', onProgress });
    const applyEnded = performance.now();
    const applyPeak = memory.take();
    results.push({
      phase: 'apply: plan + write',
      ms: verifyStarted - applyStarted,
      peak: applyPeak,
      note: `${applied.changes.attachments_created} grants, ${applied.changes.toolkits_created} toolkits`,
    });
    results.push({
      phase: 'apply: verify',
      ms: applyEnded - verifyStarted,
      peak: applyPeak,
      note: `${applied.verification.agents_checked} agents × ${applied.verification.tools.length} tools, ${applied.verification.status}`,
    });
    results.push({ phase: 'apply: total', ms: applyEnded - applyStarted, peak: applyPeak, note: 'one transaction' });

    await timed(
      'second apply',
      () => migrateEnabledTools(sequelize, manifest, { mode: 'apply' }),
      (r) => `${r.changes.attachments_created + r.changes.attachments_removed} changes`,
    );
    await timed(
      'undo',
      () => undoEnabledTools(sequelize, manifest),
      (r) => `${r.changes.attachments_removed} grants removed`,
    );

    let live = 0;
    const probe = () => {
      collectGarbage();
      live = Math.max(live, process.memoryUsage().heapUsed);
    };
    await timed(
      'apply, live-heap probe',
      () => migrateEnabledTools(sequelize, manifest, { mode: 'apply', onProgress: probe }),
      () => `live heap at batch boundaries, after GC: at most ${mb(live)}`,
    );
    return results;
  } finally {
    memory.stop();
    await sequelize.close();
    await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(dbName)} WITH (FORCE)`));
  }
}

/** The server as a reader of the figures needs it named: version and JIT settings, as shipped or set. */
async function describeServer(adminUrl: string): Promise<string> {
  const row = await withClient(
    adminUrl,
    async (c) =>
      (
        await c.query<{ v: string; jit: string; cost: string }>(
          `SELECT current_setting('server_version') AS v, current_setting('jit') AS jit, current_setting('jit_above_cost') AS cost`,
        )
      ).rows[0]!,
  );
  return `PostgreSQL ${row.v.split(' ')[0]}, jit = ${row.jit}, jit_above_cost = ${row.cost}`;
}

type Server = { label: string; run<T>(fn: (adminUrl: string) => Promise<T>): Promise<T> };

export async function benchEnabledToolsMigration(sizes: readonly number[] = SIZES, only?: 'url' | 'embedded'): Promise<void> {
  const servers: Server[] = [];
  const given = process.env.DATABASE_URL?.trim();
  if (given && only !== 'embedded') servers.push({ label: 'DATABASE_URL', run: (fn) => fn(given) });
  if (only !== 'url') servers.push({ label: 'embedded', run: (fn) => withEmbeddedServer(fn) });
  console.log(`enabled_tools migration (${os.cpus().length} CPUs, Node ${process.version}, fetched 10,000 agents at a time)`);
  const tables: { title: string; lines: string[] }[] = [];
  for (const server of servers) {
    await server.run(async (adminUrl) => {
      const named = `${server.label}: ${await describeServer(adminUrl)}`;
      for (const count of sizes) {
        const results = await benchOneSize(adminUrl, count);
        const lines = [`  ${'phase'.padEnd(22)}${'time'.padStart(10)}${'peak RSS'.padStart(11)}${'peak heap'.padStart(11)}  notes`];
        for (const r of results)
          lines.push(
            `  ${r.phase.padEnd(22)}${s(r.ms).padStart(10)}${mb(r.peak.rss).padStart(11)}${mb(r.peak.heapUsed).padStart(11)}  ${r.note}`,
          );
        const title = `${count.toLocaleString('en-US')} agents, ${named}`;
        console.log(`\n${title}\n${lines.join('\n')}`);
        tables.push({ title, lines });
      }
    });
  }
  if (servers.length > 1) printSideBySide(sizes, tables);
}

/** The times of each size on every server, one column per server. */
function printSideBySide(sizes: readonly number[], tables: { title: string; lines: string[] }[]): void {
  console.log('\nside by side (time)');
  for (const count of sizes) {
    const prefix = `${count.toLocaleString('en-US')} agents, `;
    const mine = tables.filter((t) => t.title.startsWith(prefix));
    console.log(`\n${count.toLocaleString('en-US')} agents`);
    for (const t of mine) console.log(`  [${mine.indexOf(t) + 1}] ${t.title.slice(prefix.length)}`);
    const rows = mine[0]!.lines.slice(1).map((l) => l.slice(2, 24));
    console.log(`  ${'phase'.padEnd(22)}${mine.map((_, i) => `[${i + 1}]`.padStart(10)).join('')}`);
    rows.forEach((phase, i) => console.log(`  ${phase}${mine.map((t) => t.lines[i + 1]!.slice(24, 34)).join('')}`));
  }
}

/** `--agents 1000000` or `--agents 20000,100000`; `--only url|embedded`; `--via-cli [--rounds N]`. */
function readArgs(argv: string[]): { sizes: number[]; only?: 'url' | 'embedded'; viaCli: boolean; rounds: number } {
  const { values } = parseArgs({
    args: argv,
    options: {
      agents: { type: 'string' },
      only: { type: 'string' },
      'via-cli': { type: 'boolean', default: false },
      rounds: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  let sizes = SIZES;
  if (values.agents !== undefined) {
    sizes = values.agents.split(',').map((n) => Number(n.replace(/_/g, '')));
    if (sizes.some((n) => !Number.isInteger(n) || n < 1))
      throw new Error(`--agents takes whole numbers, comma-separated: got "${values.agents}"`);
  }
  const only = values.only;
  if (only !== undefined && only !== 'url' && only !== 'embedded') throw new Error(`--only takes url or embedded: got "${only}"`);
  const rounds = values.rounds === undefined ? 1 : Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds takes a whole number from 1: got "${values.rounds}"`);
  if (values.rounds !== undefined && !values['via-cli']) throw new Error('--rounds goes with --via-cli only');
  return { sizes, only, viaCli: values['via-cli'], rounds };
}

/** The deploy path, `npm run migrate`, as child processes on each server (see migration-via-cli.ts). */
async function benchDeployPath(sizes: readonly number[], only: 'url' | 'embedded' | undefined, rounds: number): Promise<void> {
  const servers: Server[] = [];
  const given = process.env.DATABASE_URL?.trim();
  if (given && only !== 'embedded') servers.push({ label: 'DATABASE_URL', run: (fn) => fn(given) });
  if (only !== 'url') servers.push({ label: 'embedded', run: (fn) => withEmbeddedServer(fn) });
  console.log(`the deploy path, npm run migrate, as child processes (${os.cpus().length} CPUs, Node ${process.version})`);
  for (const server of servers) {
    await server.run(async (adminUrl) => {
      const named = `${server.label}: ${await describeServer(adminUrl)}`;
      for (const count of sizes) await benchViaCli(adminUrl, named, count, rounds, STRINGS);
    });
  }
}

if (require.main === module) {
  const { sizes, only, viaCli, rounds } = readArgs(process.argv.slice(2));
  (viaCli ? benchDeployPath(sizes, only, rounds) : benchEnabledToolsMigration(sizes, only)).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
