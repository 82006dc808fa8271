// What tracing adds to the recorded dispatch path (SEMANTICS §16): POST /agents/:id/tool-calls of a
// no-op host tool, over HTTP to the service's app, one call at a time, in three modes side by side:
// `off` (tracing: false, no span made at all), `api` (the default, with no SDK registered: the API's
// no-op spans) and `sdk` (the service's own tracer provider, the batch processor and the OTLP/HTTP
// JSON exporter, sending to a receiver in the parent process that counts what it is sent). A tracer
// provider is process-wide, so each mode runs in a process of its own; the modes take turns over
// several rounds, in an order that rotates each round, so drift falls on each alike. Uses
// DATABASE_URL when set, else a throwaway embedded PostgreSQL (fsync off unless BENCH_DURABLE=1).
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { senderAsGiven } from '../middleware/sender-check';
import { createSequelize } from '../src/db/connect';
import { createApp } from '../src/app/app';
import { createLogger } from '../src/app/logger';
import { startServiceTracing } from '../src/app/tracing';
import { createToolgate } from '../src/toolgate';
import { noopTool, percentiles, type Percentiles } from './percentiles';
import { withBenchDatabase } from './postgres-server';

const MODES = ['off', 'api', 'sdk'] as const;
type Mode = (typeof MODES)[number];
const ROUNDS = 3;
const WARMUP = 300;
const CALLS = 1500;
const CLIENT = 'bench-spans-client-token-0123456789';

interface Summary extends Percentiles {
  mean: number;
}

function summaryOf(samples: number[]): Summary {
  return { ...percentiles(samples), mean: samples.reduce((a, b) => a + b, 0) / samples.length };
}

/** One mode, in this (child) process: its own toolgate and app on the database, timed over HTTP. */
async function child(mode: Mode, databaseUrl: string, receiverUrl: string): Promise<number[]> {
  const tracing = mode === 'sdk' ? startServiceTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl }) : null;
  const sequelize = createSequelize(databaseUrl);
  const noop = noopTool('order_id');
  const tg = createToolgate({
    sequelize,
    policyCache: 'listen',
    senderCheck: senderAsGiven,
    tools: [noop],
    clientTokens: [CLIENT],
    ...(mode === 'off' ? { tracing: false as const } : {}),
  });
  const server: Server = createApp(tg, { logger: createLogger(false) }).listen(0, '127.0.0.1');
  try {
    await once(server, 'listening');
    await tg.migrate();
    await tg.syncSystemToolkits();
    const agent = await tg.agents.create({ name: `Bench ${mode} ${process.pid}`, toolkit_ids: [] });
    const kit = await tg.toolkits.create({ name: `Bench ${mode} ${process.pid}`, member_tool_ids: ['bench_noop'] });
    await tg.attachments.attach(agent.id, { toolkit_id: kit.id, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/agents/${agent.id}/tool-calls`;
    const body = JSON.stringify({ tool: 'bench_noop', input: { order_id: 'SCP-1042' }, sender: 'mara@thescoop.com' });
    const call = async () => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { Authorization: `Bearer ${CLIENT}`, 'Content-Type': 'application/json' },
        body,
      });
      if (res.status !== 200) throw new Error(`the dispatch answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };
    for (let i = 0; i < WARMUP; i++) await call();
    const times: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const started = performance.now();
      await call();
      times.push(performance.now() - started);
    }
    return times;
  } finally {
    server.close();
    await tg.close();
    await sequelize.close();
    await tracing?.shutdown();
  }
}

/** A stand-in collector: takes OTLP/HTTP JSON and counts the spans, reading each body as a collector does. */
async function startReceiver(): Promise<{ url: string; spans(): number; close(): void }> {
  let spans = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const sent = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { scopeSpans: { spans: unknown[] }[] }[] };
      for (const rs of sent.resourceSpans) for (const ss of rs.scopeSpans) spans += ss.spans.length;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans: () => spans, close: () => void server.close() };
}

async function runChild(mode: Mode, databaseUrl: string, receiverUrl: string): Promise<number[]> {
  const worker = fork(__filename, ['--mode', mode, databaseUrl, receiverUrl], { stdio: 'inherit' });
  const [message] = (await once(worker, 'message')) as [{ times?: number[]; error?: string }];
  await once(worker, 'exit');
  if (message.error !== undefined) throw new Error(`the ${mode} run failed: ${message.error}`);
  return message.times!;
}

async function main(): Promise<void> {
  await withBenchDatabase('spans', async (databaseUrl) => {
    const receiver = await startReceiver();
    try {
      const times: Record<Mode, number[]> = { off: [], api: [], sdk: [] };
      let exported = 0;
      for (let round = 0; round < ROUNDS; round++) {
        for (let k = 0; k < MODES.length; k++) {
          const mode = MODES[(round + k) % MODES.length]!;
          const before = receiver.spans();
          times[mode].push(...(await runChild(mode, databaseUrl, receiver.url)));
          if (mode === 'sdk') exported += receiver.spans() - before;
        }
      }
      report(times, exported);
    } finally {
      receiver.close();
    }
  });
}

function report(times: Record<Mode, number[]>, exported: number): void {
  const ms = (value: number) => `${value.toFixed(3)} ms`;
  const label: Record<Mode, string> = {
    off: 'tracing off (tracing: false)',
    api: 'API, no SDK registered (the default)',
    sdk: 'SDK + batch processor + OTLP/HTTP JSON exporter',
  };
  const r = Object.fromEntries(MODES.map((mode) => [mode, summaryOf(times[mode])])) as Record<Mode, Summary>;
  console.log(`POST /agents/:id/tool-calls, a no-op host tool, one at a time over HTTP: ${ROUNDS} rounds of ${CALLS} calls per mode`);
  console.log(`${'mode'.padEnd(50)} ${'p50'.padStart(10)} ${'p95'.padStart(10)} ${'p99'.padStart(10)} ${'mean'.padStart(10)}`);
  for (const mode of MODES) {
    console.log(
      `${label[mode].padEnd(50)} ${ms(r[mode].p50).padStart(10)} ${ms(r[mode].p95).padStart(10)} ${ms(r[mode].p99).padStart(10)} ${ms(r[mode].mean).padStart(10)}`,
    );
  }
  console.log(`\nadded p50: API without SDK ${ms(r.api.p50 - r.off.p50)}, SDK + exporter ${ms(r.sdk.p50 - r.off.p50)}`);
  console.log(`spans the receiver was sent in the SDK runs: ${exported} (${ROUNDS * (WARMUP + CALLS)} calls)`);
}

if (require.main === module) {
  const at = process.argv.indexOf('--mode');
  if (at !== -1) {
    const [mode, databaseUrl, receiverUrl] = process.argv.slice(at + 1) as [Mode, string, string];
    child(mode, databaseUrl, receiverUrl).then(
      (times) => process.send!({ times }, () => process.exit(0)),
      (err: unknown) => process.send!({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) }, () => process.exit(1)),
    );
  } else {
    main().catch((err) => {
      console.error(err);
      process.exit(1);
    });
  }
}
