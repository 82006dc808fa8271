// `npm run bench:migration -- --via-cli`: the deploy path as an operator runs it, timed end to end.
// On a fresh database holding the legacy application's schema and N legacy agents (made in SQL,
// with the same mix of spellings as the in-process bench), it runs `npm run migrate --
// --adopt-legacy-tables` (the first deploy: the schema migrations, adopting the legacy tables, then
// the data migration, verified) and then `npm run migrate` (the next deploy, which changes nothing),
// each as a child process. For each it prints the wall time; where it went (until the child said
// the schema was done, the data migration's own "Took", and the rest: the exit and the report);
// the CPU time of the child's processes (not the server's: on a shared machine it moves less than
// the wall time); and the peak RSS of the largest of them (GNU time's maximum resident set size).
// Prints figures; never passes or fails.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureDatabase, withClient, withDatabase } from '../src/db/database-url';
import { quoteIdent } from '../src/db/quote-ident';
import { LEGACY_SCHEMA_SQL } from '../test/legacy/fixtures/legacy-database';

const REPO = path.join(__dirname, '..');
const GNU_TIME = '/usr/bin/time';

export interface CliRun {
  /** The command, as the operator types it. */
  command: string;
  ms: number;
  /** Until the child printed the schema's line (the schema migrations done), from the spawn. */
  schemaMs: number | null;
  /** The data migration's own duration, from its report. */
  applyMs: number | null;
  /** Peak RSS of the largest process in the child's tree, in bytes; null without GNU time. */
  maxRssBytes: number | null;
  /** CPU time (user and system) of the child's processes, not the server's; null without GNU time. */
  cpuMs: number | null;
  changes: string;
}

/** Runs `npm run <script> -- <args>` on `url`, as an operator would, and times it. Throws on a non-zero exit. */
export async function timeCli(url: string, script: string, args: string[]): Promise<CliRun> {
  const npmArgs = ['run', '--silent', script, ...(args.length > 0 ? ['--', ...args] : [])];
  const command = `npm run ${script}${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`;
  const timed = existsSync(GNU_TIME);
  const [file, argv] = timed ? [GNU_TIME, ['-f', 'toolgate-bench-rusage %M %U %S', 'npm', ...npmArgs]] : ['npm', npmArgs];
  const env = { ...process.env, DATABASE_URL: url };
  const started = performance.now();
  let schemaAt: number | null = null;
  let stdout = '';
  let stderr = '';
  const child = spawn(file, argv, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (schemaAt === null && /^Schema(: up to date| migrations applied)/m.test(stdout)) schemaAt = performance.now();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`${command} exited with ${code}:\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`);
  const rusage = /toolgate-bench-rusage (\d+) ([\d.]+) ([\d.]+)/.exec(stderr);
  const took = /^Took (\d+) ms\.$/m.exec(stdout);
  const changes = /^Changes: (.*)$/m.exec(stdout);
  return {
    command,
    ms,
    schemaMs: schemaAt === null ? null : (schemaAt as number) - started,
    applyMs: took ? Number(took[1]) : null,
    maxRssBytes: rusage ? Number(rusage[1]) * 1024 : null,
    cpuMs: rusage ? (Number(rusage[2]) + Number(rusage[3])) * 1000 : null,
    changes: changes ? changes[1]! : '(no report)',
  };
}

// The in-process bench's mix (bench/enabled-tools-migration.ts), agent i taking STRINGS[i mod 15].
export async function fillLegacyDatabase(url: string, count: number, strings: readonly (string | null)[]): Promise<void> {
  await withClient(url, async (c) => {
    await c.query(LEGACY_SCHEMA_SQL);
    await c.query(
      `INSERT INTO agents (name, enabled_tools, system_prompt)
       SELECT 'Agent ' || g, ($1::text[])[1 + (g - 1) % cardinality($1::text[])], 'You are a helpful email assistant.'
         FROM generate_series(1, $2::int) g`,
      [strings, count],
    );
    // A legacy table in service has been vacuumed and analyzed; and the load's dirty pages are
    // written out now rather than during the timed run.
    await c.query('VACUUM (ANALYZE) agents');
    await c.query('CHECKPOINT');
  });
}

export interface ViaCliResult {
  first: CliRun;
  second: CliRun;
}

/** One round on `adminUrl`'s server: a fresh database with `count` legacy agents, the first deploy and the next, then the database dropped. */
export async function benchViaCliOnce(
  adminUrl: string,
  count: number,
  strings: readonly (string | null)[],
  round: number,
): Promise<ViaCliResult> {
  const dbName = `toolgate_bench_cli_${process.pid}_${count}_${round}`;
  await ensureDatabase(adminUrl, dbName);
  const url = withDatabase(adminUrl, dbName);
  try {
    await fillLegacyDatabase(url, count, strings);
    const first = await timeCli(url, 'migrate', ['--adopt-legacy-tables']);
    const second = await timeCli(url, 'migrate', []);
    return { first, second };
  } finally {
    await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(dbName)} WITH (FORCE)`));
  }
}

const s = (ms: number | null) => (ms === null ? 'n/a' : `${(ms / 1000).toFixed(2)} s`);
const mb = (bytes: number | null) => (bytes === null ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(0)} MB`);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** Prints each round as it ends, then the spread over the rounds. */
export async function benchViaCli(adminUrl: string, label: string, count: number, rounds: number, strings: readonly (string | null)[]) {
  console.log(`\n${count.toLocaleString('en-US')} legacy agents, ${label}, ${rounds} round(s), each on a fresh database`);
  const head = `  ${'round'.padEnd(7)}${'deploy'.padEnd(8)}${'total'.padStart(9)}${'schema'.padStart(9)}${'apply'.padStart(9)}${'rest'.padStart(9)}${'CPU'.padStart(9)}${'peak RSS'.padStart(10)}  load at start / changes`;
  console.log(`  command: ${'npm run migrate -- --adopt-legacy-tables'} (first), then npm run migrate (second)`);
  console.log(head);
  const results: ViaCliResult[] = [];
  for (let round = 1; round <= rounds; round++) {
    const atStart = load();
    const r = await benchViaCliOnce(adminUrl, count, strings, round);
    results.push(r);
    for (const [which, run] of [
      ['first', r.first],
      ['second', r.second],
    ] as const) {
      const schema = run.schemaMs;
      const rest = schema === null || run.applyMs === null ? null : run.ms - schema - run.applyMs;
      console.log(
        `  ${String(round).padEnd(7)}${which.padEnd(8)}${s(run.ms).padStart(9)}${s(schema).padStart(9)}${s(run.applyMs).padStart(9)}${s(rest).padStart(9)}${s(run.cpuMs).padStart(9)}${mb(run.maxRssBytes).padStart(10)}  ${which === 'first' ? `load ${atStart}; ` : ''}${run.changes}`,
      );
    }
  }
  if (rounds > 1) {
    const spread = (xs: number[]) => {
      const sorted = [...xs].sort((a, b) => a - b);
      return `median ${s(sorted[Math.floor((sorted.length - 1) / 2)]!)}, min ${s(sorted[0]!)}, max ${s(sorted[sorted.length - 1]!)}`;
    };
    console.log(`  first deploy:  ${spread(results.map((r) => r.first.ms))}`);
    console.log(`  second deploy: ${spread(results.map((r) => r.second.ms))}`);
    console.log(`  peak RSS: ${mb(Math.max(...results.flatMap((r) => [r.first.maxRssBytes ?? 0, r.second.maxRssBytes ?? 0])))} at most`);
  }
  return results;
}
