// What toolRun() + requireTool() add to a request: the same app answers a bare route and a gated
// one (policy load in one query, compile, resolve, check) over real HTTP against real PostgreSQL;
// the difference of the medians is the gate's cost. Also the in-process cost of starting a run.
// Uses DATABASE_URL when set, else a throwaway embedded PostgreSQL.
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createSequelize } from '../src/db/connect';
import { ADMITTED, REFUSED, createBenchAgent } from './bench-agent';
import { withBenchDatabase } from './postgres-server';
import { SCOOP_TOOLS } from '../src/app/demo/scoop-tools';
import { createToolgate, internalsOf } from '../src/toolgate';
import { errorHandler } from '../middleware/error-handler';
import { createLogger } from '../src/app/logger';

const WARMUP = 300;
const REQUESTS = 3000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(samples: number[]): { median: number; p95: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99) };
}

const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;

export function benchRequireTool(): Promise<void> {
  return withBenchDatabase('require', benchOn);
}

async function benchOn(url: string): Promise<void> {
  const sequelize = createSequelize(url);
  try {
    const tg = createToolgate({ sequelize, tools: SCOOP_TOOLS, adminToken: 'bench-admin-token-0123456789' });
    await tg.migrate();
    await tg.syncSystemToolkits();

    // An agent with 10 attachments and 50 rules, as in the policy benchmark.
    const agent = { id: await createBenchAgent(tg) };

    const app = express();
    app.use(express.json());
    app.post('/bare/:id', (_req, res) => {
      res.json({ ok: true });
    });
    app.post('/gated/:id', tg.toolRun(), tg.requireTool('email_analyzer'), (_req, res) => {
      res.json({ ok: true });
    });
    app.use(errorHandler({ logger: createLogger(false), renderAll: true }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    // Admitted runs pass the gate; refused ones also write their `denied` tool-call record.
    const call = async (route: string, senders: readonly string[], i: number) => {
      const started = performance.now();
      const res = await fetch(`${base}/${route}/${agent.id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ from: senders[i % senders.length] }),
      });
      await res.arrayBuffer();
      const expected = route === 'bare' || senders === ADMITTED ? 200 : 403;
      if (res.status !== expected) throw new Error(`${route} answered ${res.status}, expected ${expected}`);
      return performance.now() - started;
    };

    for (let i = 0; i < WARMUP; i++) {
      await call('bare', ADMITTED, i);
      await call('gated', ADMITTED, i);
      await call('gated', REFUSED, i);
    }
    const bare: number[] = [];
    const gatedAdmitted: number[] = [];
    const gatedRefused: number[] = [];
    // Interleaved, so every route sees the same machine conditions.
    for (let i = 0; i < REQUESTS; i++) {
      bare.push(await call('bare', ADMITTED, i));
      gatedAdmitted.push(await call('gated', ADMITTED, i));
      gatedRefused.push(await call('gated', REFUSED, i));
    }
    server.close();

    const start: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      await internalsOf(tg).runs.start(agent.id, { kind: 'sender', routing_key: ADMITTED[i % ADMITTED.length] });
      start.push(performance.now() - t0);
    }

    const b = summary(bare);
    const g = summary(gatedAdmitted);
    const r = summary(gatedRefused);
    const s = summary(start);
    console.log(
      `requireTool latency over HTTP (${REQUESTS} sequential requests per route, keep-alive, agent with 10 attachments / 50 rules, ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'}):`,
    );
    console.log(`  bare route                        median ${us(b.median)}  p95 ${us(b.p95)}  p99 ${us(b.p99)}`);
    console.log(`  toolRun+requireTool, admitted     median ${us(g.median)}  p95 ${us(g.p95)}  p99 ${us(g.p99)}`);
    console.log(`  toolRun+requireTool, refused 403  median ${us(r.median)}  p95 ${us(r.p95)}  p99 ${us(r.p99)}`);
    console.log(
      `  added by the gate: admitted median ${us(g.median - b.median)} (p95 ${us(g.p95 - b.p95)}); refused, with its denied record, median ${us(r.median - b.median)}`,
    );
    console.log(`  runs.start() in-process (load in one query + compile + resolve): median ${us(s.median)}  p95 ${us(s.p95)}`);
  } finally {
    await sequelize.close();
  }
}

if (require.main === module) {
  benchRequireTool().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
