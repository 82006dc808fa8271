// Recorded dispatch against its floor (issue 34): POST /agents/:id/tool-calls through the service app,
// a tool that does nothing, uncapped, capped and with a fresh Idempotency-Key, driven by a load
// generator in a process of its own; and beside it, in the same run on the same database, the floor
// no implementation beats: a call's two statements (its `started` record before the tool runs, its
// outcome after) sent by node-postgres directly over as many connections as there are requests in
// flight. The kinds take turns in rounds, so each sees the machine as the others do, and each
// figure is given as a ratio to the floor of the same round. Then each kind one request at a time:
// its p50. Uses DATABASE_URL when set, else a throwaway embedded PostgreSQL. BENCH_ROUNDS, BENCH_REQUESTS
// (per kind and round) and BENCH_SEQUENTIAL set the sizes; BENCH_PROFILE=<file> writes a CPU profile
// of the server over one kind (BENCH_PROFILE_KIND, 1 by default: uncapped) instead; BENCH_POOL sets
// the pool's size (5 by default, createSequelize's), BENCH_RATE_LIMIT=off turns the limit off.
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import { z } from 'zod';
import { createApp } from '../src/app/app';
import { createSequelize } from '../src/db/connect';
import { createLogger } from '../src/app/logger';
import { createToolgate } from '../src/toolgate';
import { defineTool } from '../src/tools/tool-registry';
import type { LoadRequest, LoadResult } from './load-generator';
import { withBenchDatabase } from './postgres-server';

const IN_FLIGHT = 16;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PER_ROUND = Number(process.env.BENCH_REQUESTS ?? 3000);
const ONE_AT_A_TIME = Number(process.env.BENCH_SEQUENTIAL ?? 1000);
const SENDERS = Array.from({ length: 50 }, (_, i) => `user${i}@acme.com`);
const CLIENT_TOKEN = 'bench-client-token-0123456789abcdef';

const noop = defineTool({
  id: 'noop',
  display_name: 'No-op',
  summary: 'Does nothing.',
  input: z.strictObject({ n: z.number().int() }),
  execute: async ({ n }) => ({ n }),
});

/** What the service writes for a call, and nothing else: the same columns, as named statements. */
const FLOOR_START = {
  name: 'floor_start',
  text: `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, instance_id, deadline_at)
         VALUES ($1, 'noop', 'noop', 'started', 'sender', $2, 0, 'floor', now() + interval '1 minute') RETURNING id`,
};
const FLOOR_COMPLETE = {
  name: 'floor_complete',
  text: `UPDATE tool_calls SET status = 'success', duration_ms = $2 WHERE id = $1 AND status IS NOT DISTINCT FROM 'started'`,
};

async function floor(pool: Pool, agentId: number, connections: number, amount: number): Promise<LoadResult> {
  const times: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      const client = await pool.connect();
      try {
        while (next < amount) {
          const i = next++;
          const t = performance.now();
          const { rows } = await client.query<{ id: string }>({ ...FLOOR_START, values: [agentId, SENDERS[i % SENDERS.length]] });
          await client.query({ ...FLOOR_COMPLETE, values: [rows[0]!.id, 0] });
          times.push(performance.now() - t);
        }
      } finally {
        client.release();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;
  return { rps: amount / seconds, p50: at(0.5), p99: at(0.99), non2xx: 0, total: amount };
}

/** Runs `work` under V8's CPU profiler (this process: the server, or the floor) and writes the profile to `file`. */
async function profile(file: string, work: () => Promise<unknown>): Promise<void> {
  const session = new Session();
  session.connect();
  const post = (method: string) =>
    new Promise<unknown>((resolve, reject) => session.post(method, (err, res) => (err ? reject(err) : resolve(res))));
  await post('Profiler.enable');
  // A sample every 100 µs: at the default 1 ms a request of a few hundred µs is seen in too few samples.
  await new Promise<void>((resolve, reject) =>
    session.post('Profiler.setSamplingInterval', { interval: 100 }, (err) => (err ? reject(err) : resolve())),
  );
  await post('Profiler.start');
  await work();
  const { profile: taken } = (await post('Profiler.stop')) as { profile: object };
  await writeFile(file, JSON.stringify(taken));
  session.disconnect();
  console.log(`the CPU profile is in ${file}`);
}

function load(request: LoadRequest): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'load-generator.ts'), JSON.stringify(request)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as LoadResult) : reject(new Error(`load generator exited ${code}`)),
    );
  });
}

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export function benchRecordedDispatch(): Promise<void> {
  return withBenchDatabase('dispatch', benchOn);
}

async function benchOn(url: string): Promise<void> {
  const sequelize = createSequelize(url, process.env.BENCH_POOL ? { pool: { max: Number(process.env.BENCH_POOL) } } : {});
  const pool = new Pool({ connectionString: url, max: IN_FLIGHT });
  const tg = createToolgate({
    sequelize,
    tools: [noop],
    adminToken: 'bench-admin-token-0123456789',
    clientTokens: [CLIENT_TOKEN],
    // The service's own limit (TOOLGATE_RATE_LIMIT, counted in PostgreSQL), with a budget no run exhausts.
    rateLimit: process.env.BENCH_RATE_LIMIT === 'off' ? false : { windowMs: 60_000, limit: 100_000_000 },
  });
  try {
    await tg.migrate();
    await tg.syncSystemToolkits();
    const kit = await tg.toolkits.create({ name: 'No-ops', member_tool_ids: ['noop'] });
    const agentWith = async (name: string, caps: { tool_id: string | null; per: 'agent' | 'sender'; limit: number; window: string }[]) => {
      const agent = await tg.agents.create({ name, toolkit_ids: [] });
      await tg.attachments.attach(agent.id, { toolkit_id: kit.id, rules: [{ kind: 'allow', pattern: '*@acme.com' }], caps });
      return agent.id;
    };
    const plain = await agentWith('Plain', []);
    const capped = await agentWith('Capped', [{ tool_id: 'noop', per: 'sender', limit: 10_000, window: '1d' }]);

    const app = createApp(tg, { logger: createLogger(false) });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${CLIENT_TOKEN}` };
    let keys = 0;
    const service = (agent: number, keyed: boolean) => (connections: number, amount: number) =>
      load({
        url: `${base}/api/agents/${agent}/tool-calls`,
        connections,
        amount,
        headers,
        tool: 'noop',
        senders: SENDERS,
        ...(keyed ? { keyPrefix: `bench-${process.pid}-${keys++}` } : {}),
      });
    const kinds: { label: string; run: (connections: number, amount: number) => Promise<LoadResult> }[] = [
      { label: 'floor: the two statements through pg', run: (c, a) => floor(pool, plain, c, a) },
      { label: 'recorded dispatch, uncapped', run: service(plain, false) },
      { label: 'recorded dispatch, capped (per sender)', run: service(capped, false) },
      { label: 'recorded dispatch, a fresh Idempotency-Key', run: service(plain, true) },
    ];
    // Warm: every path once, so no round pays for a first connection or a first plan.
    for (const kind of kinds) await kind.run(IN_FLIGHT, 500);
    if (process.env.BENCH_PROFILE) {
      await profile(process.env.BENCH_PROFILE, () => kinds[Number(process.env.BENCH_PROFILE_KIND ?? 1)]!.run(IN_FLIGHT, PER_ROUND));
      server.close();
      return;
    }

    const rounds = kinds.map(() => [] as (LoadResult & { cpuUs: number })[]);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? [...kinds.keys()].reverse() : [...kinds.keys()];
      for (const k of order) {
        const cpu = process.cpuUsage();
        const result = await kinds[k]!.run(IN_FLIGHT, PER_ROUND);
        const used = process.cpuUsage(cpu);
        rounds[k]!.push({ ...result, cpuUs: (used.user + used.system) / result.total });
      }
    }
    const sequential = kinds.map(() => [] as LoadResult[]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [k, kind] of kinds.entries()) sequential[k]!.push(await kind.run(1, ONE_AT_A_TIME / ROUNDS));
    }
    server.close();

    const load1 = os.loadavg().map((l) => l.toFixed(2));
    console.log(
      `Recorded dispatch against its floor: POST /api/agents/:id/tool-calls through the service app (rate limit on, counted in PostgreSQL), a no-op tool; the load generator (autocannon) in a process of its own; the floor in this process on ${IN_FLIGHT} pg connections; ${ROUNDS} rounds of ${PER_ROUND} requests per kind at ${IN_FLIGHT} in flight, in turns; then ${ONE_AT_A_TIME} one at a time; ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'}; load average ${load1.join(' ')}:`,
    );
    console.log(`  ${''.padEnd(46)} ${IN_FLIGHT} in flight:   /s     p50     p99   of the floor   one at a time: p50`);
    const floorRounds = rounds[0]!;
    for (const [k, kind] of kinds.entries()) {
      const xs = rounds[k]!;
      const ratios = xs.map((x, i) => x.rps / floorRounds[i]!.rps);
      const non2xx = xs.reduce((s, x) => s + x.non2xx, 0) + sequential[k]!.reduce((s, x) => s + x.non2xx, 0);
      console.log(
        `  ${kind.label.padEnd(46)} ${median(xs.map((x) => x.rps))
          .toFixed(0)
          .padStart(17)} ${median(xs.map((x) => x.p50))
          .toFixed(2)
          .padStart(7)} ${median(xs.map((x) => x.p99))
          .toFixed(2)
          .padStart(7)}   ${median(ratios).toFixed(2).padStart(6)} (${ratios.map((r) => r.toFixed(2)).join(' ')})   ${median(
          sequential[k]!.map((x) => x.p50),
        )
          .toFixed(3)
          .padStart(8)} ms   CPU here ${median(xs.map((x) => x.cpuUs)).toFixed(0)} µs/call${non2xx ? `  non-2xx ${non2xx}` : ''}`,
      );
    }
    const of = (k: number) => median(rounds[k]!.map((x, i) => x.rps / rounds[1]![i]!.rps));
    console.log(
      `  against uncapped: capped ${of(2).toFixed(2)}, a fresh key ${of(3).toFixed(2)} of its throughput (target: no more than 25% slower, at least 0.80)`,
    );
  } finally {
    await tg.close();
    await pool.end();
    await sequelize.close();
  }
}

if (require.main === module) {
  benchRecordedDispatch().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
