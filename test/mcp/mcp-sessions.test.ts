// Gated tools served over MCP (SEMANTICS §14): a session opened for one message's sender, reached
// by the SDK's own Streamable HTTP client and by the MCP Inspector's command line. The session lists
// exactly that run's tools, every call goes through the one dispatch path with the session's
// routing key, a revocation refuses the next call and changes the list (tools/list_changed), and
// the session's token opens nothing else, ends when closed or expired, and serves one agent.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QueryTypes } from 'sequelize';
import { ADMIN_TOKEN, CLIENT_TOKEN, createTestApp, type TestApp } from '../support/app';
import { createSundae, type Sundae } from '../support/scoop';

const OTHER_CLIENT = 'other-client-token-0123456789abcdef';
const INSPECTOR = path.join(path.dirname(require.resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build/index.js');
const run = promisify(execFile);

let t: TestApp;
let server: Server;
let base: string;
let gated: Sundae;
let approval: Sundae;
const clients: Client[] = [];

beforeAll(async () => {
  t = await createTestApp({ clientTokens: [CLIENT_TOKEN, OTHER_CLIENT], mcpSessions: { pollMs: 200 } });
  server = createServer(t.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gated = await createSundae(t, 'gate');
  approval = await createSundae(t, 'approval', { name: 'Sundae (approval)' });
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

const message = (from: string) => ({ from, to: ['support@thescoop.com'], subject: 'Order', body: 'Where is my order?' });

async function open(agentId: number, from: string, token = CLIENT_TOKEN) {
  const res = await fetch(`${base}/api/agents/${agentId}/mcp-sessions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ message: message(from) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any -- the answer's JSON
}

async function connect(url: string, token: string, onListChanged?: () => void): Promise<Client> {
  const client = new Client({ name: 'toolgate-test', version: '1' });
  if (onListChanged) client.setNotificationHandler(ToolListChangedNotificationSchema, onListChanged);
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}

const records = (agentId: number) =>
  t.sequelize.query<{ tool_id: string; status: string; routing_key: string | null; error: string | null }>(
    'SELECT tool_id, status, routing_key, error FROM tool_calls WHERE agent_id = :agentId ORDER BY id',
    { replacements: { agentId }, type: QueryTypes.SELECT },
  );

const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("when a client opens an MCP session for a message's sender", () => {
  test("then the answer gives the endpoint's URL, a token, the expiry and the run's tools", async () => {
    const mara = await open(gated.id, 'Mara <mara@thescoop.com>');
    expect(mara.status).toBe(201);
    expect(mara.body).toMatchObject({
      url: `${base}/mcp`,
      routing_key: 'mara@thescoop.com',
      tools_offered: ['check_flavor_stock', 'lookup_order', 'process_refund'],
      needs_approval: [],
    });
    expect(mara.body.token).toMatch(/^tgmcp_[A-Za-z0-9_-]{43}$/);
    const minutes = (Date.parse(mara.body.expires_at) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(14);
    expect(minutes).toBeLessThanOrEqual(15);
    const jane = await open(gated.id, 'jane@acme.com');
    expect(jane.body.tools_offered).toEqual(['check_flavor_stock', 'lookup_order']);
  });

  test("then the SDK's client lists exactly the run's tools, each with its input schema", async () => {
    const { body } = await open(gated.id, 'jane@acme.com');
    const client = await connect(body.url, body.token);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['check_flavor_stock', 'lookup_order']);
    expect(tools.find((tool) => tool.name === 'lookup_order')!.inputSchema).toMatchObject({
      type: 'object',
      properties: { order_id: expect.any(Object) },
    });
    expect((await t.admin().get('/metrics').expect(200)).text).toMatch(/^toolgate_mcp_session_connections [1-9]/m);
  });

  test('then a call runs once through dispatch, recorded with the routing key of the session', async () => {
    const { body } = await open(gated.id, 'mara@thescoop.com');
    const client = await connect(body.url, body.token);
    const result = (await client.callTool({ name: 'process_refund', arguments: { order_id: 'SCP-1042' } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ order_id: 'SCP-1042', refunded: true });
    expect((await records(gated.id)).filter((r) => r.tool_id === 'process_refund')).toEqual([
      { tool_id: 'process_refund', status: 'success', routing_key: 'mara@thescoop.com', error: null },
    ]);
  });

  test("then a tool the session was not offered is refused and recorded, and the host's tool never runs", async () => {
    const { body } = await open(gated.id, 'jane@acme.com');
    const client = await connect(body.url, body.token);
    const before = (await records(gated.id)).length;
    const result = (await client.callTool({ name: 'process_refund', arguments: { order_id: 'SCP-1043' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('process_refund is not offered to this run');
    const after = (await records(gated.id)).slice(before);
    expect(after).toEqual([expect.objectContaining({ tool_id: 'process_refund', status: 'denied', routing_key: 'jane@acme.com' })]);
  });

  test('then an input the tool refuses never leaves toolgate: a result naming the field, and no record', async () => {
    const { body } = await open(gated.id, 'jane@acme.com');
    const client = await connect(body.url, body.token);
    const before = (await records(gated.id)).length;
    const result = (await client.callTool({ name: 'lookup_order', arguments: { order_id: 42 } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^The arguments do not match the tool's input schema, so nothing ran: order_id: /);
    expect((await records(gated.id)).length).toBe(before);
  });

  test('then a tool that needs approval is listed as such, and a call of it is filed, not run', async () => {
    const { body } = await open(approval.id, 'jane@acme.com');
    expect(body.needs_approval).toEqual(['process_refund']);
    const client = await connect(body.url, body.token);
    const refund = (await client.listTools()).tools.find((tool) => tool.name === 'process_refund')!;
    expect(refund._meta).toEqual({ 'toolgate/needs_approval': true });
    expect(refund.description).toContain('Needs approval');
    const result = (await client.callTool({ name: 'process_refund', arguments: { order_id: 'SCP-1044' } })) as CallToolResult;
    expect(result).toMatchObject({ isError: true, _meta: { 'toolgate/status': 'pending_approval' } });
    const requestId = result._meta!['toolgate/approval_request_id'];
    const pending = await t.admin().get(`/api/agents/${approval.id}/approval-requests`).expect(200);
    expect(pending.body).toContainEqual(
      expect.objectContaining({ id: requestId, tool: 'process_refund', input: { order_id: 'SCP-1044' }, status: 'pending' }),
    );
  });
});

describe('when an operator revokes a tool while a session is open', () => {
  test('then the next call is refused, and the client is told its list changed and lists it without the tool', async () => {
    const sundae = await createSundae(t, 'gate', { name: 'Sundae (revoked)' });
    const { body } = await open(sundae.id, 'mara@thescoop.com');
    let changed = 0;
    const client = await connect(body.url, body.token, () => (changed += 1));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('process_refund');
    await t
      .admin()
      .post(`/api/agents/${sundae.id}/toolkits/${sundae.finance}/rules`)
      .send({ kind: 'deny', pattern: 'mara@thescoop.com' })
      .expect(201);
    const result = (await client.callTool({ name: 'process_refund', arguments: { order_id: 'SCP-1045' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('a deny rule of its gate matches this sender');
    await until(() => changed > 0, 'tools/list_changed');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['check_flavor_stock', 'lookup_order']);
    expect((await records(sundae.id)).map((r) => [r.tool_id, r.status])).toEqual([['process_refund', 'denied']]);
  });

  test('then a client that only listens is told too, by the poll, before it calls anything', async () => {
    const sundae = await createSundae(t, 'gate', { name: 'Sundae (listening)' });
    const { body } = await open(sundae.id, 'mara@thescoop.com');
    let changed = 0;
    const client = await connect(body.url, body.token, () => (changed += 1));
    await client.listTools();
    await t.admin().delete(`/api/agents/${sundae.id}/toolkits/${sundae.finance}`).expect(204);
    await until(() => changed > 0, 'tools/list_changed');
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('process_refund');
  });
});

describe("when a session's token is used anywhere else, or after the session ends", () => {
  test('then it opens no route of the API, and no other token opens the MCP endpoint', async () => {
    const { body } = await open(gated.id, 'mara@thescoop.com');
    const as = (token: string) => ({ Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' });
    for (const [method, url] of [
      ['GET', '/api/agents'],
      ['GET', `/api/agents/${gated.id}/tools`],
      ['POST', `/api/agents/${gated.id}/tool-calls`],
      ['POST', `/api/agents/${gated.id}/mcp-sessions`],
    ] as const) {
      const res = await fetch(`${base}${url}`, {
        method,
        headers: as(body.token),
        ...(method === 'POST'
          ? { body: JSON.stringify({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'mara@thescoop.com' }) }
          : {}),
      });
      expect([url, res.status]).toEqual([url, 401]);
    }
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    for (const token of [ADMIN_TOKEN, CLIENT_TOKEN, 'tgmcp_' + 'A'.repeat(43)]) {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { ...as(token), Accept: 'application/json, text/event-stream' },
        body: JSON.stringify(initialize),
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    }
  });

  test("then another session's token cannot use this session's connection", async () => {
    const mara = await open(gated.id, 'mara@thescoop.com');
    const jane = await open(gated.id, 'jane@acme.com');
    const client = await connect(mara.body.url, mara.body.token);
    const connection = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${jane.body.token}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': connection,
        'Mcp-Protocol-Version': '2025-06-18',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'process_refund', arguments: { order_id: 'SCP-1046' } },
      }),
    });
    expect(res.status).toBe(404);
    expect(
      (await records(gated.id)).filter(
        (r) => r.tool_id === 'process_refund' && r.routing_key === 'jane@acme.com' && r.status === 'success',
      ),
    ).toEqual([]);
  });

  test('then a closed session refuses its next request, on its open connection too', async () => {
    const { body } = await open(gated.id, 'mara@thescoop.com');
    const client = await connect(body.url, body.token);
    await client.listTools();
    await t.client().delete(`/api/agents/${gated.id}/mcp-sessions/${body.session_id}`).expect(204);
    await expect(client.listTools()).rejects.toThrow();
    const again = await fetch(body.url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${body.token}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(again.status).toBe(401);
  });

  test('then a client that initializes again and again holds at most four connections, the oldest ended first', async () => {
    const { body } = await open(gated.id, 'mara@thescoop.com');
    const made: Client[] = [];
    for (let i = 0; i < 6; i++) made.push(await connect(body.url, body.token));
    await expect(made[0]!.listTools()).rejects.toThrow();
    await expect(made[1]!.listTools()).rejects.toThrow();
    for (const client of made.slice(2)) expect((await client.listTools()).tools.length).toBe(3);
  });

  test('then an expired session refuses its next request', async () => {
    const { body } = await open(gated.id, 'mara@thescoop.com');
    const client = await connect(body.url, body.token);
    await client.listTools();
    await t.sequelize.query("UPDATE mcp_sessions SET expires_at = now() - interval '1 second' WHERE id = :id", {
      replacements: { id: body.session_id },
    });
    await expect(client.listTools()).rejects.toThrow();
  });

  test('then only the caller that opened it, or an admin, closes it', async () => {
    const { body } = await open(gated.id, 'mara@thescoop.com');
    const path = `/api/agents/${gated.id}/mcp-sessions/${body.session_id}`;
    const other = await fetch(`${base}${path}`, { method: 'DELETE', headers: { Authorization: `Bearer ${OTHER_CLIENT}` } });
    expect(other.status).toBe(404);
    await t.admin().delete(`/api/agents/${approval.id}/mcp-sessions/${body.session_id}`).expect(404);
    await t.admin().delete(path).expect(204);
    await t.admin().delete(path).expect(404);
  });
});

describe('when a session is asked for a run its caller may not start', () => {
  test("then the agent's access rules refuse its sender as for a message, and nothing opens", async () => {
    const sundae = await createSundae(t, 'gate', { name: 'Sundae (staff only)' });
    await t.admin().post(`/api/agents/${sundae.id}/access-rules`).send({ kind: 'allow', pattern: '*@thescoop.com' }).expect(201);
    const jane = await open(sundae.id, 'jane@acme.com');
    expect(jane).toMatchObject({ status: 403, body: { code: 'sender_forbidden' } });
    const [{ count }] = await t.sequelize.query<{ count: string }>('SELECT count(*) FROM mcp_sessions WHERE agent_id = :id', {
      replacements: { id: sundae.id },
      type: QueryTypes.SELECT,
    });
    expect(Number(count)).toBe(0);
  });

  test("then a scheduled session is the scheduler's (or an admin's), and a client asking for one is refused", async () => {
    await t.client().post(`/api/agents/${gated.id}/mcp-sessions`).send({ scheduled: true }).expect(403);
    const scheduled = await t.scheduler().post(`/api/agents/${gated.id}/mcp-sessions`).send({ scheduled: true }).expect(201);
    expect(scheduled.body).toMatchObject({ routing_key: null, tools_offered: [] });
  });
});

describe("when the MCP Inspector's command line is pointed at a session", () => {
  const inspect = async (url: string, token: string, ...args: string[]) => {
    const { stdout } = await run(
      process.execPath,
      [INSPECTOR, url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args],
      {
        timeout: 30_000,
        // It finds its own package.json by a path it checks from the working directory: run it from its own.
        cwd: path.dirname(INSPECTOR),
      },
    );
    return JSON.parse(stdout) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the Inspector's JSON
  };

  test("then it lists the run's tools and calls one through dispatch", async () => {
    const { body } = await open(gated.id, 'mara@thescoop.com');
    const listed = await inspect(body.url, body.token, '--method', 'tools/list');
    expect(listed.tools.map((tool: { name: string }) => tool.name)).toEqual(['check_flavor_stock', 'lookup_order', 'process_refund']);
    const before = (await records(gated.id)).length;
    const called = await inspect(
      body.url,
      body.token,
      '--method',
      'tools/call',
      '--tool-name',
      'lookup_order',
      '--tool-arg',
      'order_id=SCP-1042',
    );
    expect(called.isError).toBeFalsy();
    expect(called.structuredContent).toMatchObject({ id: 'SCP-1042', flavor: 'Mint Chip' });
    expect((await records(gated.id)).slice(before)).toEqual([
      { tool_id: 'lookup_order', status: 'success', routing_key: 'mara@thescoop.com', error: null },
    ]);
  });
});
