// An MCP server in the test process, built with the SDK's own McpServer and
// StreamableHTTPServerTransport (stateful sessions, so it can tell a client its tools changed),
// behind a bearer token. It records every tools/call it receives, with its arguments and _meta, so
// a test can show what reached it and what did not; it can change a tool's description, and it can
// be stopped and started again on the same port.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import express from 'express';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface ReceivedCall {
  name: string;
  args: Record<string, unknown>;
  meta: Record<string, unknown> | undefined;
}

export interface McpTestServer {
  url: string;
  calls: ReceivedCall[];
  /** Requests refused for their bearer token. */
  unauthorized: number;
  /** Changes `check_stock`'s description in every session, which tells each client its tools changed. */
  describeCheckStock(description: string): void;
  /** How long `slow_report` takes, in ms. */
  slowMs: number;
  /** While set, every request is answered 503 with a body that quotes its Authorization header and URL, as a careless proxy might. */
  echoing: boolean;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export const CHECK_STOCK_DESCRIPTION = "Checks a flavor's stock in the shop's freezer.\nGives the tubs left.";

/** `token`: the bearer token it takes; `key`: the `?key=` its URL must carry. */
export async function startMcpTestServer(token: string, key: string): Promise<McpTestServer> {
  const calls: ReceivedCall[] = [];
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; checkStock: RegisteredTool }>();
  const state = { description: CHECK_STOCK_DESCRIPTION, slowMs: 50, unauthorized: 0, echoing: false };

  function newServer(): { server: McpServer; checkStock: RegisteredTool } {
    const server = new McpServer({ name: 'scoop-freezer', version: '1.0.0' });
    const checkStock = server.registerTool(
      'check_stock',
      {
        title: 'Freezer stock',
        description: state.description,
        inputSchema: { flavor: z.string().min(1), tubs: z.number().int().min(1).optional() },
        annotations: { readOnlyHint: true },
      },
      async (args, extra) => {
        calls.push({ name: 'check_stock', args, meta: extra._meta });
        return { content: [{ type: 'text', text: `${args.flavor}: 12 tubs left` }] };
      },
    );
    server.registerTool(
      'melt-report',
      { description: 'Files a melted-order report.', inputSchema: { order_id: z.string() } },
      async (args, extra) => {
        calls.push({ name: 'melt-report', args, meta: extra._meta });
        return { content: [{ type: 'text', text: `the freezer log has no entry for ${args.order_id}` }], isError: true };
      },
    );
    server.registerTool('slow_report', { description: 'A report that takes a while.', inputSchema: {} }, async (args, extra) => {
      calls.push({ name: 'slow_report', args, meta: extra._meta });
      await new Promise((resolve) => setTimeout(resolve, state.slowMs));
      return { content: [{ type: 'text', text: 'done' }] };
    });
    return { server, checkStock };
  }

  const app = express();
  app.use(express.json());
  app.use((req, res, next) => {
    if (state.echoing) {
      res.status(503).json({ error: 'down for maintenance', authorization: req.headers.authorization, url: req.url });
      return;
    }
    if (req.headers.authorization === `Bearer ${token}` && req.query.key === key) return next();
    state.unauthorized += 1;
    res.status(401).json({ error: 'unauthorized' });
  });
  app.all('/mcp', async (req, res) => {
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known) return known.transport.handleRequest(req, res, req.body);
    if (req.method !== 'POST') return res.status(404).json({ error: 'no such session' });
    const { server, checkStock } = newServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { transport, checkStock });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    return transport.handleRequest(req, res, req.body);
  });

  const sockets = new Set<Socket>();
  let http: Server | null = null;
  let port = 0;
  const start = () =>
    new Promise<void>((resolve) => {
      http = createServer(app);
      http.on('connection', (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      http.listen(port, '127.0.0.1', () => {
        port = (http!.address() as AddressInfo).port;
        resolve();
      });
    });
  const stop = async () => {
    const server = http;
    http = null;
    for (const session of sessions.values()) await session.transport.close().catch(() => undefined);
    sessions.clear();
    for (const socket of sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  await start();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get echoing() {
      return state.echoing;
    },
    set echoing(on: boolean) {
      state.echoing = on;
    },
    calls,
    get unauthorized() {
      return state.unauthorized;
    },
    describeCheckStock(description) {
      state.description = description;
      for (const session of sessions.values()) session.checkStock.update({ description });
    },
    get slowMs() {
      return state.slowMs;
    },
    set slowMs(ms: number) {
      state.slowMs = ms;
    },
    stop,
    start,
    close: stop,
  };
}
