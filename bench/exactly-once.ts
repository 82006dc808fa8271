// What exactly-once costs on the dispatch path (SEMANTICS §13): POST /tool-calls through the whole
// service app, uncapped, capped (counters holding a few calls, and one holding 7,500 and more of
// 10,000), with a fresh Idempotency-Key, and a replay of a stored answer; and a redelivered message.
// Each kind is timed one at a time (its SQL statements counted, the replays' reads EXPLAINed), then
// with 16 requests in flight. Uses DATABASE_URL when set, else a throwaway embedded PostgreSQL.
import type { AddressInfo } from 'node:net';
import { QueryTypes } from 'sequelize';
import { z } from 'zod';
import { createApp } from '../src/app/app';
import { createSequelize } from '../src/db/connect';
import { createLogger } from '../src/app/logger';
import { createToolgate } from '../src/toolgate';
import { defineTool } from '../src/tools/tool-registry';
import { withBenchDatabase } from './postgres-server';

const WARMUP = 200;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const HEAVY_FILL = 7500;
const SENDERS = 50;
const IN_FLIGHT = 16;
const ROUNDS = 10;
const CLIENT_TOKEN = 'bench-client-token-0123456789abcdef';

// A tool that does nothing, so the figures are toolgate's own cost, not a tool's.
const noop = defineTool({
  id: 'noop',
  display_name: 'No-op',
  summary: 'Does nothing.',
  input: z.strictObject({ n: z.number().int() }),
  execute: async ({ n }) => ({ n }),
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const us = (ms: number) => `${(ms * 1000).toFixed(0).padStart(5)} µs`;

interface Kind {
  label: string;
  send(i: number): Promise<Response>;
  times: number[];
  statements: number[];
  /** The statements of its last timed request. */
  sql?: string[];
  perSecond: number;
}

export function benchExactlyOnce(): Promise<void> {
  return withBenchDatabase('once', benchOn);
}

async function benchOn(url: string): Promise<void> {
  // Every statement toolgate sends through its pool, counted (timers slowed so none lands mid-request).
  const seen: string[] = [];
  const sequelize = createSequelize(url, { logging: (sql: string) => void seen.push(sql) });
  try {
    const tg = createToolgate({
      sequelize,
      tools: [noop],
      adminToken: 'bench-admin-token-0123456789',
      clientTokens: [CLIENT_TOKEN],
      policyCache: 'listen',
      recovery: { heartbeatMs: 600_000, staleAfterMs: 1_800_000, sweepIntervalMs: 600_000 },
    });
    await tg.migrate();
    await tg.syncSystemToolkits();
    const kit = await tg.toolkits.create({ name: 'No-ops', member_tool_ids: ['noop'] });
    const agentWith = async (name: string, caps: { tool_id: string | null; per: 'agent' | 'sender'; limit: number; window: string }[]) => {
      const agent = await tg.agents.create({ name, toolkit_ids: [] });
      await tg.attachments.attach(agent.id, { toolkit_id: kit.id, rules: [{ kind: 'allow', pattern: '*@acme.com' }], caps });
      return agent.id;
    };
    const plain = await agentWith('Plain', []);
    const lightlyCapped = await agentWith('Capped per sender', [{ tool_id: 'noop', per: 'sender', limit: 10_000, window: '1d' }]);
    const heavilyCapped = await agentWith('Capped per agent', [{ tool_id: null, per: 'agent', limit: 10_000, window: '1d' }]);

    const app = createApp(tg, { logger: createLogger(false) });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${CLIENT_TOKEN}`, ...headers },
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      return res;
    };
    const timed = async (kind: Kind, send: () => Promise<Response>, keep: boolean) => {
      const before = seen.length;
      const started = performance.now();
      const res = await send();
      const took = performance.now() - started;
      if (res.status !== 200) throw new Error(`${kind.label}: ${res.status}, expected 200`);
      if (keep) {
        kind.times.push(took);
        kind.statements.push(seen.length - before);
        kind.sql = seen.slice(before);
      }
    };
    const call = (agent: number, i: number, headers?: Record<string, string>) => () =>
      post(`/api/agents/${agent}/tool-calls`, { tool: 'noop', input: { n: i }, sender: `user${i % SENDERS}@acme.com` }, headers);

    // The per-agent counter holds 7,500 calls inside its window, as a busy day would leave it; each
    // phase starts it there again, so no phase fills it.
    await call(heavilyCapped, 0)();
    const fillHeavy = async () => {
      await sequelize.query(
        `WITH u AS (UPDATE cap_usage SET used = ${HEAVY_FILL} WHERE cap_key LIKE :key RETURNING id),
              gone AS (DELETE FROM cap_hits WHERE usage_id IN (SELECT id FROM u))
         INSERT INTO cap_hits (usage_id, at) SELECT u.id, now() - interval '1 hour' + g * interval '1 ms' FROM u, generate_series(1, ${HEAVY_FILL}) AS g`,
        { replacements: { key: `%|agent:${heavilyCapped}` } },
      );
      await sequelize.query('ANALYZE cap_hits');
    };

    const replayKey = 'bench-replay-key';
    const replay = () =>
      post(
        `/api/agents/${plain}/tool-calls`,
        { tool: 'noop', input: { n: -1 }, sender: 'user0@acme.com' },
        { 'idempotency-key': replayKey },
      );
    await replay();
    // A redelivered message: the first delivery runs the agent (the local model); every later one
    // with the same Message-ID, sender and content is answered from what the first stored.
    const message = {
      message: { from: 'user0@acme.com', subject: 'Order', body: 'Where is my order SCP-1042?', message_id: '<bench-redelivery@acme.com>' },
    };
    const redeliver = () => post(`/api/agents/${plain}/messages`, message);
    if ((await redeliver()).status !== 200) throw new Error('the first delivery of the message failed');

    let key = 0;
    const kinds: Kind[] = [
      { label: 'uncapped', send: (i) => call(plain, i)(), times: [], statements: [], perSecond: 0 },
      {
        label: `capped, per sender (up to ${Math.ceil((WARMUP + REQUESTS) / SENDERS)} calls a counter)`,
        send: (i) => call(lightlyCapped, i)(),
        times: [],
        statements: [],
        perSecond: 0,
      },
      {
        label: `capped, per agent (${HEAVY_FILL} and more of 10000 counted)`,
        send: (i) => call(heavilyCapped, i)(),
        times: [],
        statements: [],
        perSecond: 0,
      },
      {
        label: 'uncapped, a fresh Idempotency-Key',
        send: (i) => call(plain, i, { 'idempotency-key': `bench-${process.pid}-${key++}` })(),
        times: [],
        statements: [],
        perSecond: 0,
      },
      { label: 'a replay (same Idempotency-Key and body)', send: replay, times: [], statements: [], perSecond: 0 },
      { label: 'a redelivered message (same Message-ID)', send: redeliver, times: [], statements: [], perSecond: 0 },
    ];

    // Sequential and interleaved, so every kind sees the same machine conditions.
    await fillHeavy();
    for (let i = 0; i < WARMUP + REQUESTS; i++) {
      for (const kind of kinds) await timed(kind, () => kind.send(i), i >= WARMUP);
    }
    const [replaySql, redeliverySql] = [kinds[4]!, kinds[5]!].map((kind) => kind.sql);

    // Then IN_FLIGHT requests at a time, one kind after another in rounds (each kind alone in its
    // turn, its turns spread over the run): the dispatches a second each sustains.
    await fillHeavy();
    const spent = new Map<Kind, number>(kinds.map((kind) => [kind, 0]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of kinds) {
        let next = 0;
        const started = performance.now();
        await Promise.all(
          Array.from({ length: IN_FLIGHT }, async () => {
            while (next < REQUESTS / ROUNDS) {
              const res = await kind.send(round * REQUESTS + next++);
              if (res.status !== 200) throw new Error(`${kind.label}: ${res.status}`);
            }
          }),
        );
        spent.set(kind, spent.get(kind)! + performance.now() - started);
      }
    }
    for (const kind of kinds) kind.perSecond = REQUESTS / (spent.get(kind)! / 1000);
    server.close();

    console.log(
      `Exactly once on the dispatch path: POST /tool-calls through the service app, a no-op tool (${REQUESTS} requests per kind, keep-alive, ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'}; one at a time interleaved, then ${IN_FLIGHT} in flight in ${ROUNDS} rounds):`,
    );
    console.log(`  ${''.padEnd(54)}   one at a time: median      p95   /s  statements   ${IN_FLIGHT} in flight: /s`);
    for (const kind of kinds) {
      const sorted = [...kind.times].sort((a, b) => a - b);
      const total = kind.times.reduce((a, b) => a + b, 0);
      const stmts = [...kind.statements].sort((a, b) => a - b);
      console.log(
        `  ${kind.label.padEnd(54)} ${us(percentile(sorted, 50))} ${us(percentile(sorted, 95))} ${(REQUESTS / (total / 1000)).toFixed(0).padStart(5)}  ${String(percentile(stmts, 50)).padStart(2)} (max ${stmts.at(-1)})   ${kind.perSecond.toFixed(0).padStart(9)}`,
      );
    }
    const statements = (kind: Kind) =>
      percentile(
        [...kind.statements].sort((a, b) => a - b),
        50,
      );
    console.log(
      `  statements a cap adds: ${statements(kinds[1]!) - statements(kinds[0]!)} (per sender), ${statements(kinds[2]!) - statements(kinds[0]!)} (per agent); a fresh key adds ${statements(kinds[3]!) - statements(kinds[0]!)} (read, claim, keep the answer)`,
    );
    for (const [label, sql] of [
      ['replay', replaySql],
      ['redelivery', redeliverySql],
    ] as const) {
      for (const statement of sql ?? []) {
        const text = statement.replace(/^Executing \([^)]*\): /, '');
        const plan = await sequelize.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) ${text}`, { type: QueryTypes.SELECT });
        console.log(`  the ${label}'s statement: ${text.slice(0, 90)}${text.length > 90 ? '…' : ''}`);
        // Its scans: each reads by an index, none by a sequential scan.
        for (const line of plan.map((p) => p['QUERY PLAN']).filter((l) => /Scan/.test(l)))
          console.log(`    ${line.replace(/^\s*(->\s*)?/, '')}`);
      }
    }
    await tg.close();
  } finally {
    await sequelize.close();
  }
}

if (require.main === module) {
  benchExactlyOnce().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
