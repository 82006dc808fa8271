// What toolRun() + requireTool() cost a host route, as the host sees it: the same trivial handler
// bare and gated, driven by autocannon with 16 concurrent clients. The server is toolgate compiled
// by tsc, as a host installs it (under tsx every call into another module goes through a getter,
// which a host never pays). It runs in a child process on a core of its own where it can (taskset),
// the load generator on another. The machine's speed drifts from one run to the next by more than
// the gate costs, so the routes are driven in many short rounds, bare and gated back to back in
// each, and each round's gated figure is compared with the bare figure of the same round. A control
// route puts two middleware that do nothing where toolRun() and requireTool() stand: what any two
// middleware cost the host, apart from the gate's work. The README's route is the same handler behind
// the README example's toolgate as a host writes it (the library's defaults), paired with the bare
// route in each round like the gated one; its ratio is the one a host following the README gets. Beside the throughput, the server's own CPU
// time per request (read from /proc on Linux). Prints figures; never passes or fails.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import autocannon from 'autocannon';
import { ADMITTED } from './bench-agent';
import { pinToCores } from './pin-cores';
import { withBenchDatabase } from './postgres-server';

const CONNECTIONS = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
/** BENCH_AS_WRITTEN_PARTS=1: the README example as written with one part left out at a time, beside it. */
const PARTS = process.env.BENCH_AS_WRITTEN_PARTS === '1';
type RouteName =
  'bare' | 'layers' | 'gated' | 'uncached' | 'readme' | 'asWritten' | 'asWrittenUngated' | 'asWrittenNoCheckHost' | 'asWrittenAsGiven';
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

/** The README example's bodies: the sender, and the Authentication-Results its receiving server stamped. */
const AUTHENTICATED = ADMITTED.map((from) => ({
  body: JSON.stringify({ from, authentication_results: [`mx.thescoop.com; dmarc=pass header.from=${from.split('@')[1]}`] }),
}));

async function drive(url: string, server: number): Promise<Figures> {
  const before = cpuOf(server);
  // autocannon's own percentiles are whole milliseconds; each response's time is a fraction of one.
  const times: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const options = {
      url,
      connections: CONNECTIONS,
      duration: SECONDS,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json' },
      requests: url.includes('/as-written') ? AUTHENTICATED : ADMITTED.map((from) => ({ body: JSON.stringify({ from }) })),
    };
    const instance = autocannon(options, (err, res) => (err ? reject(err) : resolve(res)));
    instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => times.push(ms));
  });
  const cpuUs = (cpuOf(server) - before) / Math.max(1, result.requests.total);
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? Number.NaN;
  return { rps: result.requests.average, p50: at(0.5), p99: at(0.99), non2xx: result.non2xx, cpuUs };
}

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * On a machine with two cores or more where `taskset` exists, the server gets core 0 and this
 * process (the load generator, all its threads) core 1: otherwise they take turns on the same cores
 * and the figures measure the scheduler as much as the route. Returns the server's command line and
 * how to give this process its cores back.
 */
function pinned(command: string[]): { command: string[]; pinned: boolean; unpin(): void } {
  const cores = os.cpus().length;
  if (cores < 2 || !pinToCores(process.pid, '1')) return { command, pinned: false, unpin: () => undefined };
  return { command: ['taskset', '-c', '0', ...command], pinned: true, unpin: () => void pinToCores(process.pid, `0-${cores - 1}`) };
}

const ROOT = path.join(__dirname, '..');

/** Compiles the bench server and the toolgate it imports, as `npm run build` compiles the package. */
function buildServer(): string {
  const built = spawnSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', path.join(__dirname, 'tsconfig.gate-server.json')],
    { cwd: ROOT, stdio: 'inherit' },
  );
  if (built.status !== 0) throw new Error(`compiling the bench server failed (tsc exited ${built.status})`);
  return path.join(ROOT, 'dist', 'bench-server', 'bench', 'gate-server.js');
}

export async function benchGateThroughput(): Promise<void> {
  const entry = buildServer();
  await withBenchDatabase('gate', async (url) => {
    const server = pinned([process.execPath, entry]);
    const child = spawn(server.command[0]!, server.command.slice(1), {
      env: { ...process.env, BENCH_DATABASE_URL: url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const first = await new Promise<string>((resolve, reject) => {
        readline.createInterface({ input: child.stdout! }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`the bench server exited (${code})`)));
      });
      const { port, readmePort, agent, pid } = JSON.parse(first) as { port: number; readmePort: number; agent: number; pid: number };
      const routes = {
        bare: `http://127.0.0.1:${port}/bare/${agent}`,
        layers: `http://127.0.0.1:${port}/two-layers/${agent}`,
        gated: `http://127.0.0.1:${port}/gated/${agent}`,
        uncached: `http://127.0.0.1:${port}/gated-uncached/${agent}`,
        readme: `http://127.0.0.1:${port}/readme/${agent}`,
        asWritten: `http://127.0.0.1:${readmePort}/as-written/${agent}`,
        ...(PARTS
          ? {
              asWrittenUngated: `http://127.0.0.1:${readmePort}/as-written-ungated/${agent}`,
              asWrittenNoCheckHost: `http://127.0.0.1:${readmePort}/as-written-no-check-host/${agent}`,
              asWrittenAsGiven: `http://127.0.0.1:${readmePort}/as-written-as-given/${agent}`,
            }
          : {}),
      };
      for (const url of Object.values(routes))
        await autocannon({
          url,
          connections: CONNECTIONS,
          duration: 2,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ from: ADMITTED[0] }),
          ...(url.includes('/as-written') ? { requests: AUTHENTICATED } : {}),
        });
      const runs = Object.fromEntries(Object.keys(routes).map((name) => [name, [] as Figures[]])) as Record<RouteName, Figures[]>;
      for (let round = 0; round < ROUNDS; round++) {
        // Each round drives bare and gated back to back, in turn first, so each pair sees the same machine.
        const parts: RouteName[] = PARTS ? ['asWrittenUngated', 'asWrittenNoCheckHost', 'asWrittenAsGiven'] : [];
        const order: RouteName[] =
          round % 2
            ? [...[...parts].reverse(), 'asWritten', 'readme', 'gated', 'bare', 'layers', 'uncached']
            : ['bare', 'gated', 'readme', 'asWritten', ...parts, 'layers', 'uncached'];
        for (const name of order) runs[name].push(await drive(routes[name]!, pid));
      }
      const med = (xs: Figures[], k: keyof Figures) => median(xs.map((x) => x[k]));
      const row = (label: string, xs: Figures[]) =>
        `  ${label.padEnd(38)} ${med(xs, 'rps').toFixed(0).padStart(6)} req/s  p50 ${med(xs, 'p50').toFixed(2).padStart(6)} ms  p99 ${med(xs, 'p99').toFixed(2).padStart(6)} ms  non-2xx ${xs.reduce((s, x) => s + x.non2xx, 0)}  server CPU ${med(xs, 'cpuUs').toFixed(0)} µs/request`;
      console.log(
        `host route, gated vs ungated (autocannon, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per route, bare and gated back to back in each round, then the control; agent with 10 attachments / 50 rules; server compiled by tsc, in its own process, ${server.pinned ? 'pinned to core 0, load generator to core 1' : 'not pinned (no taskset): figures are noisier'}); medians over the rounds:`,
      );
      console.log(row('bare route', runs.bare));
      console.log(row('two middleware that do nothing', runs.layers));
      console.log(row('toolRun + requireTool, policy cache', runs.gated));
      console.log(row('toolRun + requireTool, no cache', runs.uncached));
      console.log(row("the README example's route, its defaults", runs.readme));
      console.log(row('the README example as written', runs.asWritten));
      // Each round's figure against the other route's figure in the same round, then the median: the
      // machine's drift between rounds cancels out of a pair.
      const range = (xs: number[], digits: number) => `${Math.min(...xs).toFixed(digits)} to ${Math.max(...xs).toFixed(digits)}`;
      const compare = (label: string, xs: Figures[], base: Figures[] = runs.bare) => {
        const ratios = xs.map((x, i) => (100 * x.rps) / base[i]!.rps);
        const added = (k: 'p50' | 'p99' | 'cpuUs') => xs.map((x, i) => x[k] - base[i]![k]);
        const [p50s, p99s, cpus] = [added('p50'), added('p99'), added('cpuUs')];
        console.log(
          `  ${label} keeps ${median(ratios).toFixed(1)}% of its throughput (rounds: ${ratios.map((r) => r.toFixed(0)).join(', ')}%)`,
        );
        console.log(
          `    adds p50 ${median(p50s).toFixed(2)} ms (rounds ${range(p50s, 2)}), p99 ${median(p99s).toFixed(2)} ms (rounds ${range(p99s, 2)}), server CPU ${median(cpus).toFixed(0)} µs/request (rounds ${range(cpus, 0)})`,
        );
      };
      compare('against the bare route, toolRun + requireTool with cache', runs.gated);
      compare('against the bare route, two middleware that do nothing', runs.layers);
      compare('against two middleware that do nothing, toolRun + requireTool with cache', runs.gated, runs.layers);
      compare('against the bare route, toolRun + requireTool without cache', runs.uncached);
      compare("against the bare route, the README example's route (library defaults)", runs.readme);
      compare('against the bare route, the README example as written (checkHost, authservId, /api mounted)', runs.asWritten);
      if (PARTS) {
        console.log(row('as written, ungated (same app and body)', runs.asWrittenUngated));
        console.log(row('as written, without checkHost()', runs.asWrittenNoCheckHost));
        console.log(row('as written, senders as given', runs.asWrittenAsGiven));
        compare('against the bare route, the README example ungated (its app, its body)', runs.asWrittenUngated);
        compare('against the README example ungated, the example as written', runs.asWritten, runs.asWrittenUngated);
        compare('against the README example ungated, as written without checkHost()', runs.asWrittenNoCheckHost, runs.asWrittenUngated);
        compare('against the README example ungated, as written with senders as given', runs.asWrittenAsGiven, runs.asWrittenUngated);
      }
      const ratioOf = (xs: Figures[]) => median(xs.map((x, i) => x.rps / runs.bare[i]!.rps));
      for (const [label, xs] of [
        ["the README example's route as a host writes it", runs.readme],
        ['the README example as written', runs.asWritten],
      ] as const) {
        const ratio = ratioOf(xs);
        console.log(
          `  ${label}: ${ratio.toFixed(2)} of the bare route's throughput (target at least 0.95: ${ratio >= 0.95 ? 'met' : 'NOT met'})`,
        );
      }
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      server.unpin();
    }
  });
}

if (require.main === module) {
  benchGateThroughput().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
