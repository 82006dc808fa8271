// Warm and cold resolution with 1,000 and 100,000 agents in the database, and the cache's memory.
// Each agent holds three of twenty shared toolkits, one of them gated by two rules; each size runs in
// a process of its own, on a database of its own. Cold: a run whose policy is read and compiled (one
// query); warm: a cache hit started as toolRun() starts it (no promise), timed a pass of ten times
// the 1,000 at a time, the sizes' processes in turn and each round's pair compared. Both over 1,000
// agents spread over the table, of the same shapes at every size. Memory: the heap the cache holds
// once filled to its default bound (10,000 agents, or every agent when fewer), measured after a
// collection. Prints; never passes or fails.
import { fork, type ChildProcess } from 'node:child_process';
import { on, once } from 'node:events';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createSequelize } from '../src/db/connect';
import { withClient } from '../src/db/database-url';
import { migrateUp } from '../src/db/migrate';
import { SCOOP_TOOLS } from '../src/app/demo/scoop-tools';
import { ListenedPolicies } from '../src/run/listened-policies';
import { createToolgate, internalsOf, type Toolgate } from '../src/toolgate';
import type { Sequelize } from 'sequelize';
import { pinToCores } from './pin-cores';
import { withBenchDatabase, withPostgresServer } from './postgres-server';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const SIZES = [1_000, 100_000];
const SAMPLE = 1_000;
/** A warm pass goes over the sample this many times: a pass of 1,000 hits is too short to time well. */
const REPEAT = 10;
const WARM_ROUNDS = 200;

async function fill(url: string, agents: number): Promise<void> {
  await withClient(url, async (c) => {
    await c.query(
      `INSERT INTO toolkits (name, member_tool_ids) SELECT 'Scale kit ' || k, ARRAY['lookup_order', 'check_flavor_stock', 'email_analyzer'] FROM generate_series(1, 20) k`,
    );
    await c.query(`INSERT INTO agents (name) SELECT 'Scale agent ' || g FROM generate_series(1, ${agents}) g`);
    await c.query(`INSERT INTO agent_toolkits (agent_id, toolkit_id)
                   SELECT a.id, t.id FROM agents a JOIN toolkits t ON t.name IN ('Scale kit ' || (a.id % 20 + 1), 'Scale kit ' || ((a.id + 7) % 20 + 1), 'Scale kit ' || ((a.id + 13) % 20 + 1))`);
    await c.query(`INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern)
                   SELECT at.id, r.kind, r.pattern FROM agent_toolkits at
                     CROSS JOIN (VALUES ('allow', '*@thescoop.com'), ('deny', 'intern@thescoop.com')) AS r(kind, pattern)
                    WHERE at.toolkit_id = (SELECT min(id) FROM toolkits WHERE name LIKE 'Scale kit %') + at.agent_id % 20`);
    await c.query('ANALYZE');
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)] ?? NaN;
const p99 = (xs: number[]) => quantile(xs, 0.99);

interface Prepared {
  size: number;
  tg: Toolgate;
  sequelize: Sequelize;
  /** Reads every sampled agent's policy that is not in the cache (none, unless one aged out). */
  warm(): Promise<void>;
  /** One warm pass over the sampled agents: µs a run. */
  pass(): number;
  line: string;
}

const RUN = { kind: 'sender' as const, routing_key: 'mara@thescoop.com' };

/** `size` agents in the empty database at `url` and a toolgate on it: the cold runs and the cache's memory, measured now. */
async function prepare(url: string, size: number): Promise<Prepared> {
  const sequelize = createSequelize(url, { queryTimeoutMs: 0 });
  const tg = createToolgate({ sequelize, tools: SCOOP_TOOLS, policyCache: 'listen' });
  await migrateUp(sequelize);
  await fill(url, size);
  const [{ min }] = (await sequelize.query('SELECT min(id) AS min FROM agents'))[0] as { min: number }[];
  // An agent's shape (which kits, which one gated) follows its id modulo 20: a stride of 1 modulo 20
  // gives each size's sample the same mix of shapes, so the sizes differ in the table alone.
  const room = Math.floor(size / SAMPLE);
  const stride = room >= 21 ? room - ((room - 1) % 20) : 1;
  const ids = Array.from({ length: SAMPLE }, (_, i) => Number(min) + i * stride);
  const runs = internalsOf(tg).runs;
  const policies = runs.policies as ListenedPolicies;
  policies.start();
  if (policies.listenerState !== 'listening') await once(policies, 'listening');
  gc();
  const before = process.memoryUsage().heapUsed;
  const time = async (id: number) => {
    const t0 = performance.now();
    // As toolRun() does: a warm hit starts from the cache alone, anything else reads.
    const r = runs.startCached(id, RUN) ?? (await runs.start(id, RUN));
    if (!r.offers('lookup_order')) throw new Error(`agent ${id} is not granted lookup_order`);
    return (performance.now() - t0) * 1000;
  };
  const cold: number[] = [];
  for (const id of ids) cold.push(await time(id));

  const fillTo = Math.min(size, 10_000);
  // The sample first: it is the hot set, which an LRU keeps. Filled after it, the sample would be
  // evicted and read again, and the sizes would compare two heap layouts of the hot set.
  const spread = Array.from({ length: fillTo }, (_, i) => Number(min) + Math.floor((i * size) / fillTo));
  const all = [...new Set([...ids, ...spread])].slice(0, fillTo);
  const reads: Promise<unknown>[] = [];
  for (const id of all) {
    reads.push(runs.start(id, RUN));
    if (reads.length === 20) await Promise.all(reads.splice(0));
  }
  await Promise.all(reads);
  gc();
  const held = process.memoryUsage().heapUsed - before;
  const warm = async () => {
    for (const id of ids) if (runs.startCached(id, RUN) === undefined) await runs.start(id, RUN);
  };
  // A whole pass over the sample is timed, not each run: a run of a microsecond is too short for
  // the clock to time alone.
  const pass = () => {
    const t0 = performance.now();
    for (let r = 0; r < REPEAT; r++) {
      for (const id of ids) {
        const run = runs.startCached(id, RUN);
        if (run === undefined) throw new Error(`agent ${id} left the cache during a warm pass: every run of a warm pass must be a hit`);
        if (!run.offers('lookup_order')) throw new Error(`agent ${id} is not granted lookup_order`);
      }
    }
    return ((performance.now() - t0) * 1000) / (REPEAT * ids.length);
  };
  const line =
    `cold (read + compile) median ${median(cold).toFixed(0)} µs, p99 ${p99(cold).toFixed(0)} µs; ` +
    `cache of ${runs.cachedAgents.toLocaleString('en-US')} agents holds ${(held / 1024 / 1024).toFixed(1)} MB (${(held / runs.cachedAgents / 1024).toFixed(1)} KB each)`;
  return { size, tg, sequelize, warm, pass, line };
}

/** What a size's process answers the parent. */
type ChildMessage = { ready: string } | { pass: number } | { error: string };

/**
 * One size, in a process of its own, on a database of its own (the parent's server is its
 * DATABASE_URL): prepares, then runs a warm pass whenever the parent asks, and cleans up when told.
 * A heap of its own, as an instance would have: in one shared heap, whichever toolgate was built
 * second ran its warm passes slower, by as much as the sizes differed.
 */
async function child(size: number): Promise<void> {
  const send = (m: ChildMessage) => process.send!(m);
  // Every size's passes on the same core, where taskset exists: the sizes then differ in their
  // process alone, not in which core (and which of its caches' contents) they ran on.
  pinToCores(process.pid, '1');
  try {
    await withBenchDatabase(`scale_${size}`, async (url) => {
      const p = await prepare(url, size);
      try {
        await p.warm();
        send({ ready: p.line });
        for await (const [m] of on(process, 'message') as AsyncIterable<[string]>) {
          if (m !== 'pass') break;
          send({ pass: p.pass() });
        }
      } finally {
        await p.tg.close();
        await p.sequelize.close();
      }
    });
  } catch (err) {
    send({ error: String((err as Error)?.stack ?? err) });
  }
  // Everything it opened is closed; exit rather than wait on whatever a library left ticking.
  process.exit(0);
}

/** A size's process, as the parent drives it. */
class SizeProcess {
  readonly #proc: ChildProcess;
  readonly #replies: ChildMessage[] = [];
  #waiting: ((m: ChildMessage) => void) | undefined;

  constructor(
    readonly size: number,
    adminUrl: string,
  ) {
    this.#proc = fork(__filename, ['--size', String(size)], { env: { ...process.env, DATABASE_URL: adminUrl }, stdio: 'inherit' });
    const deliver = (m: ChildMessage) => {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      if (waiting) waiting(m);
      else this.#replies.push(m);
    };
    this.#proc.on('message', deliver);
    this.#proc.once('exit', (code) => deliver({ error: `the ${size}-agent process exited (${code})` }));
  }

  #next(): Promise<ChildMessage> {
    const queued = this.#replies.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  async ready(): Promise<string> {
    const m = await this.#next();
    if ('ready' in m) return m.ready;
    throw new Error('error' in m ? m.error : 'unexpected reply');
  }

  async pass(): Promise<number> {
    this.#proc.send('pass');
    const m = await this.#next();
    if ('pass' in m) return m.pass;
    throw new Error('error' in m ? m.error : 'unexpected reply');
  }

  async close(): Promise<void> {
    if (this.#proc.exitCode !== null) return;
    const exited = once(this.#proc, 'exit');
    if (this.#proc.connected) this.#proc.send('close');
    await exited;
  }
}

export async function benchResolutionScale(sizes: readonly number[] = SIZES): Promise<void> {
  await withPostgresServer(async (adminUrl) => {
    console.log(
      `resolution at scale (a sample of ${SAMPLE} agents spread over the table; each agent: 3 attachments, 2 rules; each size in a process of its own):`,
    );
    const procs: SizeProcess[] = [];
    try {
      // One after the other: preparing fills a database, which would color the other's cold runs.
      const lines: string[] = [];
      for (const size of sizes) {
        const proc = new SizeProcess(size, adminUrl);
        procs.push(proc);
        lines.push(await proc.ready());
      }
      // Warm passes of every size in turn, round after round: this machine's speed drifts from one
      // minute to the next, and sizes measured minutes apart would compare the minutes. Untimed
      // rounds first, for the JIT.
      for (let round = 0; round < 5; round++) for (const p of procs) await p.pass();
      const warm = new Map<SizeProcess, number[]>(procs.map((p) => [p, []]));
      for (let round = 0; round < WARM_ROUNDS; round++) {
        const order = round % 2 ? [...procs].reverse() : procs;
        for (const p of order) warm.get(p)!.push(await p.pass());
      }
      procs.forEach((p, i) => {
        const passes = warm.get(p)!;
        console.log(
          `  ${p.size.toLocaleString('en-US').padStart(7)} agents: ${lines[i]}; warm (cache hit) ${median(passes).toFixed(2)} µs a run (median of ${WARM_ROUNDS} passes, slowest ${Math.max(...passes).toFixed(2)} µs)`,
        );
      });
      // Each round's largest size against its smallest, then the median: the pairs see the same minute.
      const [small, large] = [procs[0], procs[procs.length - 1]];
      if (small && large && small !== large) {
        const [a, b] = [warm.get(small)!, warm.get(large)!];
        const ratios = b.map((x, i) => x / a[i]!);
        const pct = (r: number) => `${r >= 1 ? '+' : '−'}${Math.abs((r - 1) * 100).toFixed(1)}%`;
        console.log(
          `  warm, ${large.size.toLocaleString('en-US')} agents against ${small.size.toLocaleString('en-US')}: ${pct(median(ratios))} (median of the ${WARM_ROUNDS} paired rounds; quartiles ${pct(quantile(ratios, 0.25))} and ${pct(quantile(ratios, 0.75))})`,
        );
      }
    } finally {
      for (const p of procs) await p.close();
    }
  });
}

if (require.main === module) {
  const at = process.argv.indexOf('--size');
  const run = at === -1 ? benchResolutionScale() : child(Number(process.argv[at + 1]));
  run.catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
