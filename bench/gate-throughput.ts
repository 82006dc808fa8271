// What toolRun() + requireTool() cost a host route, as the host sees it: the same trivial handler
// bare and gated, driven by autocannon with 16 concurrent clients, in rounds that alternate the
// routes so each sees the same machine. The server runs in a child process, so the load generator
// does not share its event loop. Beside the throughput, the server's own CPU time per request (read
// from /proc on Linux): on a machine whose two cores the load generator shares, the throughput of
// even the bare route swings from run to run, and the CPU a request costs the server is the steadier
// figure. Prints figures; never passes or fails.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import autocannon from 'autocannon';
import { ensureDatabase, quoteIdent, withClient, withDatabase } from '../src/db/database-url';
import { ADMITTED } from './bench-agent';
import { withPostgresServer } from './postgres-server';

const CONNECTIONS = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = 3;
/** Linux's clock ticks per second, the unit of /proc/<pid>/stat's utime and stime. */
const CLOCK_TICKS = 100;

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** The server's user + system CPU per request, in µs; NaN where /proc cannot be read. */
  cpuUs: number;
}

/** A process's user + system CPU time so far, in µs, or NaN off Linux. */
function cpuOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

async function drive(url: string, server: number): Promise<Figures> {
  const before = cpuOf(server);
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    requests: ADMITTED.map((from) => ({ body: JSON.stringify({ from }) })),
  });
  const cpuUs = (cpuOf(server) - before) / Math.max(1, result.requests.total);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, cpuUs };
}

export async function benchGateThroughput(): Promise<void> {
  await withPostgresServer(async (adminUrl) => {
    const dbName = `toolgate_bench_gate_${process.pid}`;
    await ensureDatabase(adminUrl, dbName);
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'gate-server.ts')], {
      env: { ...process.env, BENCH_DATABASE_URL: withDatabase(adminUrl, dbName) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const first = await new Promise<string>((resolve, reject) => {
        readline.createInterface({ input: child.stdout! }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`the bench server exited (${code})`)));
      });
      const { port, agent } = JSON.parse(first) as { port: number; agent: number };
      const routes = { bare: `http://127.0.0.1:${port}/bare/${agent}`, gated: `http://127.0.0.1:${port}/gated/${agent}`, uncached: `http://127.0.0.1:${port}/gated-uncached/${agent}` };
      for (const url of Object.values(routes)) await autocannon({ url, connections: CONNECTIONS, duration: 1, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from: ADMITTED[0] }) });
      const runs: Record<keyof typeof routes, Figures[]> = { bare: [], gated: [], uncached: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const name of Object.keys(routes) as (keyof typeof routes)[]) runs[name].push(await drive(routes[name], child.pid!));
      }
      const mean = (xs: Figures[], k: keyof Figures) => xs.reduce((s, x) => s + x[k], 0) / xs.length;
      const row = (label: string, xs: Figures[]) =>
        `  ${label.padEnd(40)} ${mean(xs, 'rps').toFixed(0).padStart(7)} req/s  p50 ${mean(xs, 'p50').toFixed(2).padStart(6)} ms  p99 ${mean(xs, 'p99').toFixed(2).padStart(6)} ms  non-2xx ${mean(xs, 'non2xx').toFixed(0)}  server CPU ${mean(xs, 'cpuUs').toFixed(0)} µs/request (rounds: ${xs.map((x) => x.rps.toFixed(0)).join(', ')} req/s)`;
      console.log(`host route, gated vs ungated (autocannon, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per route, alternating; agent with 10 attachments / 50 rules; server in its own process):`);
      console.log(row('bare route', runs.bare));
      console.log(row('toolRun + requireTool, policy cache', runs.gated));
      console.log(row('toolRun + requireTool, no cache (before)', runs.uncached));
      const ratio = (xs: Figures[]) => ((100 * mean(xs, 'rps')) / mean(runs.bare, 'rps')).toFixed(1);
      const added = (xs: Figures[], k: 'p50' | 'p99') => (mean(xs, k) - mean(runs.bare, k)).toFixed(2);
      console.log(`  gated with cache keeps ${ratio(runs.gated)}% of the bare route's throughput; adds p50 ${added(runs.gated, 'p50')} ms, p99 ${added(runs.gated, 'p99')} ms`);
      console.log(`  gated without cache keeps ${ratio(runs.uncached)}%; adds p50 ${added(runs.uncached, 'p50')} ms, p99 ${added(runs.uncached, 'p99')} ms`);
      console.log(`  server CPU per request: gated with cache ${(mean(runs.gated, 'cpuUs') - mean(runs.bare, 'cpuUs')).toFixed(0)} µs more than bare, without cache ${(mean(runs.uncached, 'cpuUs') - mean(runs.bare, 'cpuUs')).toFixed(0)} µs more`);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(dbName)} WITH (FORCE)`)).catch(() => undefined);
    }
  });
}

if (require.main === module) {
  benchGateThroughput().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
