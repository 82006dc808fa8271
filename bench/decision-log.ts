// The decision log (SEMANTICS §16): what its trigger adds to writing a record, and how fast a read
// streams. First, records are written as dispatch writes them (a refusal; an execution's `started`
// record and its completion), in blocks that take turns with the log's triggers on and off, and the
// p50 of each is printed. Then 100,000 records are read in one GET /api/decisions over loopback,
// and the lines a second and the megabytes are printed. Uses DATABASE_URL when set, else a
// throwaway embedded PostgreSQL (fsync off unless BENCH_DURABLE=1).
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { QueryTypes, type Sequelize } from 'sequelize';
import { senderAsGiven } from '../middleware/sender-check';
import { createSequelize } from '../src/db/connect';
import { createApp } from '../src/app/app';
import { createLogger } from '../src/app/logger';
import { completeToolCall, recordToolCall, startToolCall } from '../src/services/tool-calls';
import { createToolgate } from '../src/toolgate';
import { withBenchDatabase } from './postgres-server';

const METRICS_TOKEN = 'bench-metrics-token-0123456789abcdef';
const BLOCK = 250;
const BLOCKS = 8;
const READ = 100_000;

const TRIGGERS = ['toolgate_decision_logged'];

function p50(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function setTriggers(sequelize: Sequelize, on: boolean): Promise<void> {
  for (const name of TRIGGERS) await sequelize.query(`ALTER TABLE tool_calls ${on ? 'ENABLE' : 'DISABLE'} TRIGGER ${name}`);
}

async function writes(sequelize: Sequelize, agent: number): Promise<{ refusal: number[]; execution: number[] }> {
  const record = {
    agent_id: agent,
    tool_id: 'lookup_order',
    tool_name: 'lookup_order',
    run: 'sender' as const,
    routing_key: 'jane@acme.com',
  };
  const refusal: number[] = [];
  const execution: number[] = [];
  for (let i = 0; i < BLOCK; i++) {
    let started = performance.now();
    await recordToolCall(sequelize, { ...record, status: 'denied', duration_ms: 0, error: 'Not offered to this run.' });
    refusal.push(performance.now() - started);
    started = performance.now();
    const id = await startToolCall(sequelize, record, { instance_id: 'bench', deadline_ms: 60_000 });
    await completeToolCall(sequelize, id!, { status: 'success', duration_ms: 1, error: null });
    execution.push(performance.now() - started);
  }
  return { refusal, execution };
}

async function benchOn(databaseUrl: string): Promise<void> {
  const sequelize = createSequelize(databaseUrl);
  const tg = createToolgate({
    sequelize,
    adminToken: 'bench-admin-token-0123456789abcdef',
    metricsToken: METRICS_TOKEN,
    senderCheck: senderAsGiven,
  });
  try {
    await tg.migrate();
    const [{ id: agent }] = (await sequelize.query(`INSERT INTO agents (name) VALUES ('Bench') RETURNING id`, {
      type: QueryTypes.SELECT,
    })) as [{ id: number }];
    await writes(sequelize, agent); // warm-up
    const logged = { refusal: [] as number[], execution: [] as number[] };
    const unlogged = { refusal: [] as number[], execution: [] as number[] };
    for (let block = 0; block < BLOCKS; block++) {
      const on = block % 2 === 0;
      await setTriggers(sequelize, on);
      const got = await writes(sequelize, agent);
      const into = on ? logged : unlogged;
      into.refusal.push(...got.refusal);
      into.execution.push(...got.execution);
    }
    await setTriggers(sequelize, true);
    const ms = (n: number) => `${n.toFixed(3)} ms`;
    console.log(`writes, p50 of ${(BLOCK * BLOCKS) / 2} each way (blocks of ${BLOCK} taking turns):`);
    console.log(
      `  a refusal (one insert):              ${ms(p50(logged.refusal))} logged, ${ms(p50(unlogged.refusal))} without the trigger`,
    );
    console.log(
      `  an execution (insert, then complete): ${ms(p50(logged.execution))} logged, ${ms(p50(unlogged.execution))} without the trigger`,
    );

    for (let from = 1; from <= READ; from += 10_000) {
      await sequelize.query(
        `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, error)
         SELECT $1::integer, 'process_refund', 'process_refund', 'denied', 'sender', 'sender' || g || '@acme.com', 0,
                'Not offered to this run: refused at dispatch, nothing ran.'
           FROM generate_series($2::integer, $2::integer + 9999) g`,
        { bind: [agent, from] },
      );
    }
    await sequelize.query('VACUUM ANALYZE decision_log');
    await sequelize.query('VACUUM ANALYZE tool_calls');
    const server = createApp(tg, { logger: createLogger(false) }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const started = performance.now();
      let firstLine = 0;
      let bytes = 0;
      let lines = 0;
      await new Promise<void>((resolve, reject) => {
        http
          .get(
            { port, host: '127.0.0.1', path: `/api/decisions?limit=${READ}`, headers: { Authorization: `Bearer ${METRICS_TOKEN}` } },
            (res) => {
              res.on('data', (chunk: Buffer) => {
                if (bytes === 0) firstLine = performance.now() - started;
                bytes += chunk.length;
                for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines += 1;
              });
              res.on('end', resolve);
              res.on('error', reject);
            },
          )
          .on('error', reject);
      });
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `a read of ${lines.toLocaleString('en')} lines (${(bytes / 2 ** 20).toFixed(1)} MB) in ${seconds.toFixed(2)} s: ` +
          `${Math.round(lines / seconds).toLocaleString('en')} lines/s, ${(bytes / 2 ** 20 / seconds).toFixed(1)} MB/s; first byte after ${firstLine.toFixed(0)} ms`,
      );
    } finally {
      server.closeAllConnections();
      server.close();
    }
    const server_ = process.env.DATABASE_URL?.trim() ? 'DATABASE_URL' : 'embedded PostgreSQL';
    console.log(`(${server_}, load average ${loadavg()[0]!.toFixed(1)} at the end)`);
  } finally {
    await tg.close();
    await sequelize.close();
  }
}

void withBenchDatabase('decisions', benchOn).catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
