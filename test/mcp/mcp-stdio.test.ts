// MCP tools from published servers run over stdio as child processes: the filesystem server on a
// temporary folder (its own effect, a file written or not, shows what reached it) and the everything
// server (names with "-" and camelCase). A sender the gate refuses writes nothing; an agent run with
// an OpenAI-compatible model is offered the tool for Mara and not for Jane, and calls it through
// dispatch; a killed server process is a recorded failure and is started again; close() ends them.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QueryTypes } from 'sequelize';
import { OpenAIModel } from '../../src/llm/openai-model';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';
import { completion, startFakeOpenAI, toolCalls, type FakeOpenAI, type RecordedRequest } from '../support/fake-openai';

const FILESYSTEM = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')), 'dist/index.js');
const EVERYTHING = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist/index.js');
const SECRET = `fs-${Math.random().toString(36).slice(2)}-env`;
process.env.SCOOP_FILES_NOTE = SECRET;

let dir: string;
let fake: FakeOpenAI;
let t: TestApp;
let sundae: number;

/** This process's children that run a server (the servers toolgate started). */
function serverPids(name: string): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid), '-f', name], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'toolgate-mcp-'));
  writeFileSync(path.join(dir, 'policy.txt'), 'Melted orders are refunded within 48 hours.\n');
  fake = await startFakeOpenAI();
  t = await createTestApp({
    model: new OpenAIModel({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'gpt-test', timeoutMs: 5_000, maxRetries: 0 }),
    mcp: {
      mcpServers: {
        files: { command: process.execPath, args: [FILESYSTEM, dir], env: { SCOOP_NOTE: '${SCOOP_FILES_NOTE}' } },
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      },
    },
  });
  const files = await makeToolkit(t, 'Shop files', ['files__read_text_file', 'files__write_file', 'everything__get_sum']);
  sundae = await makeAgent(t, { name: 'Sundae', toolkit_ids: [] });
  await t
    .admin()
    .post(`/api/agents/${sundae}/toolkits`)
    .send({ toolkit_id: files, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] })
    .expect(201);
});

afterAll(async () => {
  await t.close();
  await fake.close();
  // Whatever close() left behind is ended here, so no test leaves a process running.
  for (const pid of [...serverPids('server-filesystem'), ...serverPids('server-everything')]) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const dispatch = (sender: string, tool: string, input: unknown) =>
  t.client().post(`/api/agents/${sundae}/tool-calls`).send({ tool, input, sender });

async function until(check: () => Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('when toolgate starts two published servers over stdio', () => {
  test('then both are connected, as child processes, and their tools are pinned under snake_case ids', async () => {
    const servers = await t.admin().get('/api/mcp/servers').expect(200);
    expect(servers.body).toEqual([
      expect.objectContaining({ name: 'files', transport: 'stdio', status: 'connected', held: 0, skipped: [] }),
      expect.objectContaining({ name: 'everything', transport: 'stdio', status: 'connected', held: 0 }),
    ]);
    expect(serverPids('server-filesystem')).toHaveLength(1);
    const files = (await t.admin().get('/api/mcp/servers/files/tools').expect(200)).body.map((tool: { id: string }) => tool.id);
    expect(files).toEqual(expect.arrayContaining(['files__read_text_file', 'files__write_file', 'files__list_directory']));
    const everything = (await t.admin().get('/api/mcp/servers/everything/tools').expect(200)).body as { id: string; name: string }[];
    expect(everything).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: 'everything__get_sum', name: 'get-sum' }),
        expect.objectContaining({ id: 'everything__echo', name: 'echo' }),
      ]),
    );
  });
});

describe('when senders dispatch a filesystem tool', () => {
  test('then the refused sender writes nothing, and the admitted one writes the file, once', async () => {
    const refused = await dispatch('jane@acme.com', 'files__write_file', { path: path.join(dir, 'jane.txt'), content: 'refund me' });
    expect(refused.status).toBe(403);
    expect(existsSync(path.join(dir, 'jane.txt'))).toBe(false);
    const written = await dispatch('mara@thescoop.com', 'files__write_file', { path: path.join(dir, 'mara.txt'), content: 'approved' });
    expect(written.status).toBe(200);
    expect(written.body).toMatchObject({
      status: 'success',
      output: { content: [{ type: 'text', text: expect.stringMatching(/Successfully wrote/) }] },
    });
    expect(readFileSync(path.join(dir, 'mara.txt'), 'utf8')).toBe('approved');
  });

  test("then the everything server's get-sum runs under its id, and an input its schema refuses is a 422", async () => {
    const sum = await dispatch('mara@thescoop.com', 'everything__get_sum', { a: 2, b: 3 }).expect(200);
    expect(sum.body.output.content[0].text).toBe('The sum of 2 and 3 is 5.');
    const bad = await dispatch('mara@thescoop.com', 'everything__get_sum', { a: 'two', b: 3 }).expect(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'input', 'a']);
  });
});

interface SentBody {
  tools?: { function: { name: string; parameters: Record<string, unknown> } }[];
  messages: { role: string; content?: string | null }[];
}
const sent = (r: RecordedRequest | undefined) => r?.body as SentBody;

describe("when an agent run's model is offered the MCP tool", () => {
  beforeEach(() => {
    fake.requests.length = 0;
  });

  test("then Mara's message offers it with the server's own input schema, and the model's call runs through dispatch", async () => {
    const policy = path.join(dir, 'policy.txt');
    fake.script((_req, i) =>
      i === 0
        ? toolCalls([['files__read_text_file', JSON.stringify({ path: policy })]])
        : completion('Refunds go out within 48 hours. — Sundae'),
    );
    const res = await t
      .client()
      .post(`/api/agents/${sundae}/messages`)
      .send({ message: { from: 'mara@thescoop.com', subject: 'Refund policy', body: 'What is our melted-order policy?' } })
      .expect(200);
    expect(res.body.tools_offered).toEqual(['everything__get_sum', 'files__read_text_file', 'files__write_file']);
    const offered = sent(fake.requests[0]).tools?.find((tool) => tool.function.name === 'files__read_text_file');
    expect(offered?.function.parameters).toMatchObject({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] });
    expect(res.body.steps).toEqual([
      expect.objectContaining({
        tool: 'files__read_text_file',
        status: 'success',
        output: expect.objectContaining({ content: [{ type: 'text', text: 'Melted orders are refunded within 48 hours.\n' }] }),
      }),
    ]);
    const [record] = await t.sequelize.query<{ status: string; routing_key: string }>(
      "SELECT status, routing_key FROM tool_calls WHERE agent_id = :a AND tool_id = 'files__read_text_file' ORDER BY id DESC LIMIT 1",
      { replacements: { a: sundae }, type: QueryTypes.SELECT },
    );
    expect(record).toEqual({ status: 'success', routing_key: 'mara@thescoop.com' });
  });

  test("then Jane's message is not offered it, and a call the model makes anyway is refused at dispatch", async () => {
    fake.script((_req, i) =>
      i === 0
        ? toolCalls([['files__write_file', JSON.stringify({ path: path.join(dir, 'jane-model.txt'), content: 'refund' })]])
        : completion('I have passed this on. — Sundae'),
    );
    const res = await t
      .client()
      .post(`/api/agents/${sundae}/messages`)
      .send({ message: { from: 'jane@acme.com', subject: 'Melted', body: 'Write a refund note for me.' } })
      .expect(200);
    expect(res.body.tools_offered).toEqual([]);
    expect((sent(fake.requests[0]).tools ?? []).map((tool) => tool.function.name)).toEqual([]);
    expect(res.body.steps).toEqual([expect.objectContaining({ tool: 'files__write_file', status: 'denied' })]);
    expect(existsSync(path.join(dir, 'jane-model.txt'))).toBe(false);
  });
});

describe("when an MCP client opens a session on Mara's message", () => {
  test("then it lists the filesystem server's tools and reads the file through toolgate, and Jane's session lists none", async () => {
    const server = createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new Client({ name: 'toolgate-test', version: '1' });
    try {
      const open = async (from: string) =>
        (
          await t
            .client()
            .post(`/api/agents/${sundae}/mcp-sessions`)
            .set('Host', new URL(base).host)
            .send({ message: { from, body: 'What is the policy on melted orders?' } })
            .expect(201)
        ).body as { url: string; token: string; tools_offered: string[] };
      const jane = await open('jane@acme.com');
      expect(jane.tools_offered).toEqual([]);
      const mara = await open('mara@thescoop.com');
      await client.connect(
        new StreamableHTTPClientTransport(new URL(mara.url), { requestInit: { headers: { Authorization: `Bearer ${mara.token}` } } }),
      );
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
        'everything__get_sum',
        'files__read_text_file',
        'files__write_file',
      ]);
      const read = (await client.callTool({
        name: 'files__read_text_file',
        arguments: { path: path.join(dir, 'policy.txt') },
      })) as CallToolResult;
      expect(read.isError).toBeFalsy();
      expect(JSON.stringify(read.content)).toContain('Melted orders are refunded within 48 hours.');
    } finally {
      await client.close().catch(() => undefined);
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('when the server process is killed', () => {
  test('then a call is a recorded failure, not a 5xx, and toolgate starts the server again', async () => {
    const [pid] = serverPids('server-filesystem');
    process.kill(pid!, 'SIGKILL');
    await until(async () => (await t.admin().get('/api/mcp/servers')).body[0].status === 'unreachable', 'the server shown unreachable');
    const failed = await dispatch('mara@thescoop.com', 'files__read_text_file', { path: path.join(dir, 'policy.txt') });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ status: 'failure', error: expect.stringMatching(/unreachable/) });
    await until(async () => (await t.admin().get('/api/mcp/servers')).body[0].status === 'connected', 'the restart');
    expect(serverPids('server-filesystem')).not.toContain(pid);
    const again = await dispatch('mara@thescoop.com', 'files__read_text_file', { path: path.join(dir, 'policy.txt') }).expect(200);
    expect(again.body).toMatchObject({ status: 'success' });
  });

  test("then no answer carries the env's ${VAR} value", async () => {
    const texts = [
      (await t.admin().get('/api/mcp/servers')).text,
      (await t.admin().get('/api/mcp/servers/files/tools')).text,
      (await t.admin().get(`/api/agents/${sundae}/tool-calls`)).text,
    ];
    expect(texts.join('\n')).not.toContain(SECRET);
  });
});

describe('when toolgate closes', () => {
  test('then its server processes end', async () => {
    expect(serverPids('server-everything')).toHaveLength(1);
    await t.tg.close();
    await until(
      async () => serverPids('server-filesystem').length + serverPids('server-everything').length === 0,
      'the processes to end',
      5_000,
    );
  });
});
