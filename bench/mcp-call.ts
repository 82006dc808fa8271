// What a gated MCP call adds over calling the same server directly with the SDK, on a warm
// connection: the same in-process McpServer over Streamable HTTP on loopback is called by a plain
// SDK Client and through toolgate's dispatch path (the warm gate, the Ajv check of the input, the
// `started` record written before the call and completed after it), alternately, so drift falls on
// both alike. Printed as a table of latencies, with the in-process part (gate and input check, no
// record) apart. Uses DATABASE_URL when set, else a throwaway embedded PostgreSQL.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { createSequelize } from '../src/db/connect';
import type { ListenedPolicies } from '../src/run/listened-policies';
import { senderAsGiven } from '../middleware/sender-check';
import { createToolgate, internalsOf } from '../src/toolgate';
import { defineTool } from '../src/tools/tool-registry';
import { withBenchDatabase } from './postgres-server';

const WARMUP = 300;
const CALLS = 3000;

/** A stateless server: one McpServer and transport per request, as the SDK's examples serve HTTP. */
async function startServer(): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.use(express.json());
  app.post('/mcp', async (req, res) => {
    const server = new McpServer({ name: 'bench', version: '1.0.0' });
    server.registerTool('echo', { description: 'Echoes a message.', inputSchema: { message: z.string() } }, async ({ message }) => ({
      content: [{ type: 'text', text: message }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  const http = createServer(app).listen(0, '127.0.0.1');
  await once(http, 'listening');
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}

function percentiles(samples: number[]): { p50: number; p95: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  return { p50: at(50), p95: at(95), p99: at(99) };
}

const ms = (value: number) => `${value.toFixed(3)} ms`;

export function benchMcpCall(): Promise<void> {
  return withBenchDatabase('mcp', benchOn);
}

async function benchOn(databaseUrl: string): Promise<void> {
  const server = await startServer();
  const sequelize = createSequelize(databaseUrl);
  // A host tool that does nothing, through the same path: what the records cost any tool, MCP or not.
  const noop = defineTool({
    id: 'bench_noop',
    display_name: 'No-op',
    summary: 'Does nothing.',
    input: z.object({ message: z.string() }),
    execute: () => ({}),
  });
  const tg = createToolgate({
    sequelize,
    policyCache: 'listen',
    senderCheck: senderAsGiven,
    tools: [noop],
    mcp: { mcpServers: { bench: { url: server.url } } },
  });
  const direct = new Client({ name: 'bench-direct', version: '1' });
  try {
    await tg.migrate();
    await tg.syncSystemToolkits();
    const agent = await tg.agents.create({ name: 'Bench', toolkit_ids: [] });
    const kit = await tg.toolkits.create({ name: 'Bench MCP', member_tool_ids: ['bench__echo', 'bench_noop'] });
    await tg.attachments.attach(agent.id, { toolkit_id: kit.id, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] });
    const runs = internalsOf(tg).runs;
    const policies = runs.policies as ListenedPolicies;
    policies.start();
    if (policies.listenerState !== 'listening') await once(policies, 'listening');
    await direct.connect(new StreamableHTTPClientTransport(new URL(server.url)));

    const asked = { kind: 'sender', routing_key: 'mara@thescoop.com' } as const;
    const gated = async () => {
      const run = runs.startCached(agent.id, asked) ?? (await runs.start(agent.id, asked));
      const outcome = await run.callTool('bench__echo', { message: 'vanilla' });
      if (outcome.status !== 'success') throw new Error(`the gated call gave ${outcome.status}`);
    };
    const plain = async () => {
      await direct.callTool({ name: 'echo', arguments: { message: 'vanilla' } });
    };
    const host = async () => {
      const run = runs.startCached(agent.id, asked) ?? (await runs.start(agent.id, asked));
      const outcome = await run.callTool('bench_noop', { message: 'vanilla' });
      if (outcome.status !== 'success') throw new Error(`the host call gave ${outcome.status}`);
    };
    // toolgate's own connection to the server, with no gate, check or record: the same call as `plain`, _meta and deadline added.
    const echo = internalsOf(tg).registry.implementation('bench__echo')!;
    const ownClient = async () => {
      await echo.execute({ message: 'vanilla' }, { call_id: 1 } as Parameters<typeof echo.execute>[1]);
    };
    // The gate and the input check alone, as callTool does them before it writes the record.
    const inProcess = async () => {
      const run = runs.startCached(agent.id, asked) ?? (await runs.start(agent.id, asked));
      if (!run.offers('bench__echo')) throw new Error('not offered');
      run.validate('bench__echo', { message: 'vanilla' });
    };

    for (let i = 0; i < WARMUP; i++) {
      await plain();
      await gated();
    }
    const times = {
      direct: [] as number[],
      gated: [] as number[],
      host: [] as number[],
      inProcess: [] as number[],
      ownClient: [] as number[],
    };
    for (let i = 0; i < CALLS; i++) {
      for (const [name, call] of [
        ['direct', plain],
        ['gated', gated],
        ['host', host],
        ['ownClient', ownClient],
        ['inProcess', inProcess],
      ] as const) {
        const started = performance.now();
        await call();
        times[name].push(performance.now() - started);
      }
    }
    const d = percentiles(times.direct);
    const g = percentiles(times.gated);
    const p = percentiles(times.inProcess);
    const h = percentiles(times.host);
    const o = percentiles(times.ownClient);
    const rows = [
      ['direct, the SDK client', d],
      ['through toolgate (gate, Ajv, record before and after)', g],
      ['added by toolgate', { p50: g.p50 - d.p50, p95: g.p95 - d.p95, p99: g.p99 - d.p99 }],
      ['of which in process (gate and Ajv, no record)', p],
      ['a host tool that does nothing, same path (the records alone)', h],
      ["toolgate's own connection, no gate, check or record", o],
    ] as const;
    console.log(`MCP call over Streamable HTTP on loopback, warm connection (${CALLS.toLocaleString('en-US')} calls each, alternated):`);
    console.log('| path | p50 | p95 | p99 |');
    console.log('|---|---|---|---|');
    for (const [label, r] of rows) console.log(`| ${label} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.p99)} |`);
  } finally {
    await direct.close();
    await tg.close();
    await sequelize.close();
    await server.close();
  }
}

if (require.main === module) {
  benchMcpCall().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
