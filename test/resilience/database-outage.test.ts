// Fail closed (issue 5, item 3): a real PostgreSQL of its own is stopped under a running app, and
// every gated request answers 503 unavailable, never a grant; then it is started again and the same
// app, with the same Sequelize instance, serves grants again by itself.
import { promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import { QueryTypes, type Sequelize } from 'sequelize';
import request from 'supertest';
import { createApp } from '../../src/app/app';
import { createSequelize } from '../../src/db/connect';
import { ensureDatabase, withDatabase } from '../../src/db/database-url';
import { migrateUp } from '../../src/db/migrate';
import { ensureScoopData } from '../../src/app/demo/scoop-data';
import { SCOOP_TOOLS } from '../../src/app/demo/scoop-tools';
import { createLogger } from '../../src/app/logger';
import { createToolgate, type Toolgate } from '../../src/toolgate';
import { startRestartablePostgres, type RestartablePostgres } from './restartable-postgres';

const ADMIN_TOKEN = 'admin-token-outage-0123456789';
const CLIENT_TOKEN = 'client-token-outage-0123456789';
/** The pool's connect timeout: an unreachable database must be answered within about this long. */
const CONNECT_TIMEOUT_MS = 1_000;
/** What a 503 may take beyond the connect timeout (scheduling, the HTTP round trip). */
const SLACK_MS = 1_500;
const OUTAGE_SUBJECT = 'sent during the outage';

let tmp: string;
let dataDir: string;
let server: RestartablePostgres;
let tg: Toolgate;
let sequelize: Sequelize;
let app: Express;
let sundae: number;
let support: number;
let finance: number;
let financeAttachment: number;

const admin = (t: request.Test) => t.set('Authorization', `Bearer ${ADMIN_TOKEN}`);
const client = (t: request.Test) => t.set('Authorization', `Bearer ${CLIENT_TOKEN}`);

/** The gated requests: add a row for every route that reads grants or changes them. */
const gatedRequests: [string, () => request.Test][] = [
  [
    'a dispatch of an offered tool',
    () =>
      client(request(app).post(`/api/agents/${sundae}/tool-calls`)).send({
        tool: 'send_email',
        input: { to: 'jane@acme.com', subject: OUTAGE_SUBJECT, body: 'hi' },
        sender: 'jane@acme.com',
      }),
  ],
  [
    'a dispatch of a tool the sender is refused',
    () =>
      client(request(app).post(`/api/agents/${sundae}/tool-calls`)).send({
        tool: 'process_refund',
        input: { order_id: 'SCP-1042' },
        sender: 'jane@acme.com',
      }),
  ],
  [
    'a dispatch the sender would be granted',
    () =>
      client(request(app).post(`/api/agents/${sundae}/tool-calls`)).send({
        tool: 'process_refund',
        input: { order_id: 'SCP-1042' },
        sender: 'mara@thescoop.com',
      }),
  ],
  ['the resolution view', () => admin(request(app).get(`/api/agents/${sundae}/tools`)).query({ sender: 'jane@acme.com' })],
  ['a read of the tool-call records', () => admin(request(app).get(`/api/agents/${sundae}/tool-calls`))],
  [
    'an admin write creating a toolkit',
    () => admin(request(app).post('/api/toolkits')).send({ name: 'Made during the outage', member_tool_ids: ['lookup_order'] }),
  ],
  [
    'an admin write changing a toolkit',
    () => admin(request(app).patch(`/api/toolkits/${support}`)).send({ member_tool_ids: ['lookup_order'] }),
  ],
  [
    'an admin write changing a gate',
    () => admin(request(app).patch(`/api/agents/${sundae}/toolkits/${financeAttachment}`)).send({ rules: [] }),
  ],
  ['an admin write revoking an attachment', () => admin(request(app).delete(`/api/agents/${sundae}/toolkits/${financeAttachment}`))],
  [
    'an email analysis',
    () =>
      client(request(app).post(`/api/agents/${sundae}/email/analyze`)).send({ from: 'mara@thescoop.com', body: 'Please refund SCP-1042.' }),
  ],
  [
    'an email workflow',
    () =>
      client(request(app).post(`/api/agents/${sundae}/workflows/email`)).send({
        from: 'mara@thescoop.com',
        body: 'Please refund SCP-1042.',
      }),
  ],
  [
    'a document search',
    () => client(request(app).post(`/api/agents/${sundae}/documents/search`)).send({ query: 'refund', sender: 'mara@thescoop.com' }),
  ],
  [
    'a document question',
    () => client(request(app).post(`/api/agents/${sundae}/documents/ask`)).send({ question: 'refund?', sender: 'mara@thescoop.com' }),
  ],
  [
    'a document upload',
    () => client(request(app).post(`/api/agents/${sundae}/documents`)).send({ title: 'During the outage', content: 'Nothing.' }),
  ],
  ['a task list', () => client(request(app).get(`/api/agents/${sundae}/tasks`))],
  ['a chat message', () => client(request(app).post(`/api/agents/${sundae}/chat`)).send({ message: 'hello' })],
  [
    'an agent message',
    () =>
      client(request(app).post(`/api/agents/${sundae}/messages`)).send({
        message: { from: 'mara@thescoop.com', body: 'Approved: process SCP-1042.' },
      }),
  ],
  [
    'a scheduled agent run',
    () => admin(request(app).post(`/api/agents/${sundae}/runs`)).send({ instruction: 'Send the stock report to mara@thescoop.com.' }),
  ],
  [
    'an access rule added',
    () => admin(request(app).post(`/api/agents/${sundae}/access-rules`)).send({ kind: 'deny', pattern: 'jane@acme.com' }),
  ],
];

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-outage-'));
  await fs.chmod(tmp, 0o755); // the server runs as `postgres` when we are root
  dataDir = path.join(tmp, 'data');
  server = await startRestartablePostgres(dataDir);
  await ensureDatabase(server.url, 'toolgate');
  sequelize = createSequelize(withDatabase(server.url, 'toolgate'), { connectTimeoutMs: CONNECT_TIMEOUT_MS });
  await migrateUp(sequelize);
  tg = createToolgate({ sequelize, tools: SCOOP_TOOLS, adminToken: ADMIN_TOKEN, clientTokens: [CLIENT_TOKEN] });
  await ensureScoopData(sequelize);
  await tg.syncSystemToolkits();
  app = createApp(tg, { logger: createLogger(false) });

  const mk = async (name: string, members: string[]) =>
    (await admin(request(app).post('/api/toolkits')).send({ name, member_tool_ids: members }).expect(201)).body.id as number;
  support = await mk('Support', ['lookup_order', 'check_flavor_stock', 'send_email']);
  finance = await mk('Finance', ['process_refund']);
  sundae = (
    await admin(request(app).post('/api/agents'))
      .send({ name: 'Sundae', toolkit_ids: [support] })
      .expect(201)
  ).body.id;
  financeAttachment = (
    await admin(request(app).post(`/api/agents/${sundae}/toolkits`))
      .send({ toolkit_id: finance, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] })
      .expect(201)
  ).body.id;
}, 60_000);

afterAll(async () => {
  // Its policy listener (the default) must not try to reconnect after the file's database is gone.
  await tg?.close().catch(() => undefined);
  await sequelize?.close().catch(() => undefined);
  await server?.close().catch(() => undefined);
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
}, 30_000);

async function timed(send: () => request.Test): Promise<{ status: number; code: unknown; elapsed: number }> {
  const started = Date.now();
  const res = await send();
  return { status: res.status, code: res.body.code, elapsed: Date.now() - started };
}

async function stockCheck(): Promise<request.Response> {
  return client(request(app).post(`/api/agents/${sundae}/tool-calls`)).send({ tool: 'check_flavor_stock', sender: 'jane@acme.com' });
}

describe('when the database is up', () => {
  test('then a run is granted its tools, and the service is ready', async () => {
    // Several at once, so the pool holds idle connections that the outage will kill.
    const responses = await Promise.all(Array.from({ length: 5 }, stockCheck));
    for (const res of responses) expect(res.status).toBe(200);
    await request(app).get('/readyz').expect(200);
  });
});

describe('when the database stops under the running app', () => {
  beforeAll(async () => {
    await server.stop();
  }, 30_000);

  test.each(gatedRequests)('then %s answers 503 unavailable within the connect timeout', async (_name, send) => {
    const started = Date.now();
    const res = await send();
    expect(Date.now() - started).toBeLessThan(CONNECT_TIMEOUT_MS + SLACK_MS);
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 503, code: 'unavailable' });
    expect(typeof res.body.request_id).toBe('string');
    expect(res.headers['retry-after']).toBeDefined();
  });

  test('then requests in flight together all answer 503, none 200 or 500', async () => {
    const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => gatedRequests[i % gatedRequests.length][1]()));
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 503));
  });

  test('then /readyz answers 503 unavailable while /healthz answers 200', async () => {
    const ready = await request(app).get('/readyz');
    expect({ status: ready.status, code: ready.body.code }).toEqual({ status: 503, code: 'unavailable' });
    await request(app).get('/healthz').expect(200);
  });
});

describe('when the database port accepts connections but never answers (a hung server)', () => {
  let silent: net.Server;
  const sockets = new Set<net.Socket>();

  beforeAll(async () => {
    silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve, reject) => {
      silent.once('error', reject);
      silent.listen(server.port, '127.0.0.1', () => resolve());
    });
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  test('then a gated request answers 503 unavailable once the connect timeout expires', async () => {
    const { status, code, elapsed } = await timed(gatedRequests[0][1]);
    expect({ status, code }).toEqual({ status: 503, code: 'unavailable' });
    expect(elapsed).toBeLessThan(CONNECT_TIMEOUT_MS + SLACK_MS);
  });

  test('then more gated requests in flight than the pool holds all answer 503 unavailable within its acquire timeout', async () => {
    // Requests beyond the pool's size wait for a slot, one connect timeout a round, never past `acquire`.
    const acquireMs = sequelize.config.pool?.acquire ?? Infinity;
    const results = await Promise.all(gatedRequests.map(([, send]) => timed(send)));
    for (const { status, code, elapsed } of results) {
      expect({ status, code }).toEqual({ status: 503, code: 'unavailable' });
      expect(elapsed).toBeLessThan(acquireMs + SLACK_MS);
    }
  });

  test('then /readyz answers 503 unavailable while /healthz answers 200', async () => {
    const ready = await request(app).get('/readyz');
    expect({ status: ready.status, code: ready.body.code }).toEqual({ status: 503, code: 'unavailable' });
    await request(app).get('/healthz').expect(200);
  });
});

describe('when the database comes back on the same port', () => {
  beforeAll(async () => {
    await server.start();
  }, 60_000);

  test('then the same app grants runs again by itself within a few seconds', async () => {
    const deadline = Date.now() + 10_000;
    let last: request.Response | undefined;
    while (Date.now() < deadline) {
      last = await stockCheck();
      if (last.status === 200) break;
      expect(last.status).toBe(503); // while it recovers, still closed: never another answer
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(last?.status).toBe(200);
    await request(app).get('/readyz').expect(200);
  });

  test('then the refused sender is still refused and the admitted one still admitted', async () => {
    const refused = await gatedRequests[1][1]();
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 'tool_forbidden' });
    const view = await admin(request(app).get(`/api/agents/${sundae}/tools`))
      .query({ sender: 'mara@thescoop.com' })
      .expect(200);
    expect(view.body.tools).toContain('process_refund');
  });

  test('then nothing ran and nothing changed during the outage', async () => {
    const outbox = await sequelize.query('SELECT id FROM scoop_outbox WHERE subject = :s', {
      replacements: { s: OUTAGE_SUBJECT },
      type: QueryTypes.SELECT,
    });
    expect(outbox).toEqual([]);
    const refunds = await sequelize.query('SELECT id FROM scoop_refunds', { type: QueryTypes.SELECT });
    expect(refunds).toEqual([]);
    const [order] = await sequelize.query("SELECT status FROM scoop_orders WHERE id = 'SCP-1042'", { type: QueryTypes.SELECT });
    expect(order).toEqual({ status: 'delivered' });
    const toolkits = await admin(request(app).get('/api/toolkits')).expect(200);
    expect(toolkits.body.map((t: { name: string }) => t.name)).not.toContain('Made during the outage');
    expect(toolkits.body.find((t: { id: number }) => t.id === support).member_tool_ids).toEqual([
      'lookup_order',
      'check_flavor_stock',
      'send_email',
    ]);
    const attachment = await admin(request(app).get(`/api/agents/${sundae}/toolkits/${financeAttachment}`)).expect(200);
    expect(attachment.body.rules).toEqual([expect.objectContaining({ kind: 'allow', pattern: '*@thescoop.com' })]);
  });
});
