// What a gated MCP call adds over calling the same server directly with the SDK, on a warm
// connection: the same McpServer over Streamable HTTP on loopback, in a process of its own as an MCP
// server is, is called by a plain SDK Client and through toolgate's dispatch path (the warm gate, the
// Ajv check of the input, the `started` record written before the call and completed after it).
// The paths take turns in an order that rotates each round, so drift, and whatever one call leaves
// for the event loop to finish, fall on every path alike. Printed as a table of latencies, then the
// added p50 against the 1 ms target (issue 31) with its parts. Uses DATABASE_URL when set, else a
// throwaway embedded PostgreSQL, with fsync off unless BENCH_DURABLE=1 (each record is a commit, and
// on a durable server a commit waits for the disk).
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { QueryTypes, type Sequelize } from 'sequelize';
import { z } from 'zod';
import { createSequelize } from '../src/db/connect';
import type { ListenedPolicies } from '../src/run/listened-policies';
import { senderAsGiven } from '../middleware/sender-check';
import { createToolgate, internalsOf } from '../src/toolgate';
import { noopTool, percentiles, type Percentiles } from './percentiles';
import { withBenchDatabase } from './postgres-server';

const WARMUP = 300;
const CALLS = 3000;
/** Issue 31's target for what toolgate adds to a warm call, p50. */
const TARGET_MS = 1;

/** A stateless server: one McpServer and transport per request, as the SDK's examples serve HTTP. Its URL goes to the parent. */
async function serve(): Promise<void> {
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
  process.send!({ url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp` });
  // Gone with its parent: the IPC channel closes when the parent exits, however it exits.
  process.on('disconnect', () => process.exit(0));
}

/**
 * The server in a child process: in this one, its work after each answer (closing the request's
 * transport) would run during whichever call came next, and be counted against it.
 */
async function startServer(): Promise<{ url: string; close(): void }> {
  const child = fork(__filename, ['--serve'], { stdio: 'inherit' });
  const [message] = (await once(child, 'message')) as [{ url: string }];
  return { url: message.url, close: () => void child.kill() };
}

const ms = (value: number) => `${value.toFixed(3)} ms`;

export function benchMcpCall(): Promise<void> {
  return withBenchDatabase('mcp', benchOn);
}

type Path = 'direct' | 'gated' | 'host' | 'ownClient' | 'inProcess';

/**
 * The time calls spend holding a connection of the pool, from asking for one to handing it back:
 * inside a gated call, its two records' statements, as the call waits on them. Read and reset by
 * take(). The listener's connection is not the pool's, and the warm gate reads nothing.
 */
function poolTime(sequelize: Sequelize): { take(): number } {
  const manager = sequelize.connectionManager;
  const get = manager.getConnection.bind(manager);
  const release = manager.releaseConnection.bind(manager);
  const since = new Map<object, number>();
  let spent = 0;
  manager.getConnection = async (options) => {
    const asked = performance.now();
    const connection = await get(options);
    since.set(connection, asked);
    return connection;
  };
  manager.releaseConnection = (connection) => {
    const asked = since.get(connection);
    if (asked !== undefined) spent += performance.now() - asked;
    since.delete(connection);
    release(connection);
  };
  return {
    take: () => {
      const taken = spent;
      spent = 0;
      return taken;
    },
  };
}

async function benchOn(databaseUrl: string): Promise<void> {
  const server = await startServer();
  const sequelize = createSequelize(databaseUrl);
  // A host tool that does nothing, through the same path: what the records cost any tool, MCP or not.
  const noop = noopTool('message');
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
    const runFor = async () => runs.startCached(agent.id, asked) ?? (await runs.start(agent.id, asked));
    // toolgate's own connection to the server, with no gate, check or record: the same call as `direct`, _meta and deadline added.
    const echo = internalsOf(tg).registry.implementation('bench__echo')!;
    const paths: Record<Path, () => Promise<void>> = {
      direct: async () => {
        await direct.callTool({ name: 'echo', arguments: { message: 'vanilla' } });
      },
      gated: async () => {
        const outcome = await (await runFor()).callTool('bench__echo', { message: 'vanilla' });
        if (outcome.status !== 'success') throw new Error(`the gated call gave ${outcome.status}`);
      },
      host: async () => {
        const outcome = await (await runFor()).callTool('bench_noop', { message: 'vanilla' });
        if (outcome.status !== 'success') throw new Error(`the host call gave ${outcome.status}`);
      },
      ownClient: async () => {
        await echo.execute({ message: 'vanilla' }, { call_id: 1 } as Parameters<typeof echo.execute>[1]);
      },
      // The gate and the input check alone, as call() does them before it writes the record.
      inProcess: async () => {
        const run = await runFor();
        if (!run.offers('bench__echo')) throw new Error('not offered');
        if (!echo.input.safeParse({ message: 'vanilla' }).success) throw new Error('the input does not validate');
      },
    };
    const order = Object.keys(paths) as Path[];

    const pool = poolTime(sequelize);
    for (let i = 0; i < WARMUP; i++) for (const path of order) await paths[path]();
    const times = Object.fromEntries(order.map((path) => [path, [] as number[]])) as Record<Path, number[]>;
    const recordsInGated: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      for (let k = 0; k < order.length; k++) {
        const path = order[(i + k) % order.length]!;
        pool.take();
        const started = performance.now();
        await paths[path]();
        times[path].push(performance.now() - started);
        if (path === 'gated') recordsInGated.push(pool.take());
      }
    }
    report(
      Object.fromEntries(order.map((path) => [path, percentiles(times[path])])) as Record<Path, Percentiles>,
      percentiles(recordsInGated),
      await durability(sequelize),
    );
  } finally {
    await direct.close();
    await tg.close();
    await sequelize.close();
    server.close();
  }
}

/** Which server, and whether its commits wait for the disk: each record is a commit. */
async function durability(sequelize: Sequelize): Promise<string> {
  const [row] = await sequelize.query<{ fsync: string; synchronous_commit: string }>(
    `SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS synchronous_commit`,
    { type: QueryTypes.SELECT },
  );
  const server = process.env.DATABASE_URL?.trim() ? 'DATABASE_URL' : 'embedded PostgreSQL';
  return `${server}, fsync ${row?.fsync}, synchronous_commit ${row?.synchronous_commit}`;
}

function report(r: Record<Path, Percentiles>, recordsInGated: Percentiles, server: string): void {
  const minus = (a: Percentiles, b: Percentiles): Percentiles => ({ p50: a.p50 - b.p50, p95: a.p95 - b.p95, p99: a.p99 - b.p99 });
  const added = minus(r.gated, r.direct);
  const rows: [string, Percentiles][] = [
    ['direct, the SDK client', r.direct],
    ['through toolgate (gate, Ajv, record before and after)', r.gated],
    ['added by toolgate', added],
    ['of which in process (gate and Ajv, no record)', r.inProcess],
    ['of which the two records, timed inside the gated call', recordsInGated],
    ['a host tool that does nothing, same path (the records alone)', r.host],
    ["toolgate's own connection, no gate, check or record", r.ownClient],
  ];
  console.log(
    `MCP call over Streamable HTTP on loopback, warm connection, the server in a process of its own (${CALLS.toLocaleString('en-US')} calls each, in rotating order; ${server}):`,
  );
  console.log('| path | p50 | p95 | p99 |');
  console.log('|---|---|---|---|');
  for (const [label, p] of rows) console.log(`| ${label} | ${ms(p.p50)} | ${ms(p.p95)} | ${ms(p.p99)} |`);

  // The parts of the added p50: the records as timed inside the gated call, the rest differences of p50s.
  const gate = r.inProcess.p50;
  const records = recordsInGated.p50;
  const connection = r.ownClient.p50 - r.direct.p50;
  const rest = added.p50 - gate - records - connection;
  const verdict = added.p50 < TARGET_MS ? 'met' : `MISSED by ${ms(added.p50 - TARGET_MS)}`;
  console.log(
    `\nadded p50 ${ms(added.p50)} (gated ${ms(r.gated.p50)} less direct ${ms(r.direct.p50)}): target under ${ms(TARGET_MS)} ${verdict}`,
  );
  const part = (label: string, value: number) => console.log(`  ${label.padEnd(70)} ${ms(value)}`);
  part('gate and Ajv check, in process', gate);
  part('the two records, inside the gated call (a connection held)', records);
  part(`  the same two back to back, a host tool's path less the in-process`, r.host.p50 - r.inProcess.p50);
  part("toolgate's own connection less the SDK client's", connection);
  part('the rest (event loop turns between them, and the noise)', rest);
}

if (require.main === module) {
  const run = process.argv.includes('--serve') ? serve() : benchMcpCall();
  run.catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
