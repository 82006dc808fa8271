// A frozen database host (hostile review): connections stay open but nothing answers. Every request
// that needs the database answers 503 within the query timeout instead of hanging, nothing runs,
// and once the host answers again the same app serves by itself.
import { QueryTypes, type Sequelize } from 'sequelize';
import request from 'supertest';
import type { Express } from 'express';
import { createApp } from '../../src/app/app';
import { createSequelize } from '../../src/db/connect';
import { ensureScoopData } from '../../src/app/demo/scoop-data';
import { SCOOP_TOOLS } from '../../src/app/demo/scoop-tools';
import { createLogger } from '../../src/app/logger';
import { createToolgate, type Toolgate } from '../../src/toolgate';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startFreezableProxy, type FreezableProxy } from './freezable-proxy';

const ADMIN_TOKEN = 'admin-token-frozen-0123456789';
const CLIENT_TOKEN = 'client-token-frozen-0123456789';
/** The server cancels a statement after this long; a host that does not answer is given up on 1 s later. */
const QUERY_TIMEOUT_MS = 1_000;
const CONNECT_TIMEOUT_MS = 1_000;
/** A 503 takes at most the client's read timeout, plus scheduling and the HTTP round trip. */
const ANSWER_WITHIN_MS = QUERY_TIMEOUT_MS + 1_000 + 2_000;

let db: TestDatabase;
let proxy: FreezableProxy;
let tg: Toolgate;
let sequelize: Sequelize;
let app: Express;
let agent: number;

const admin = (t: request.Test) => t.set('Authorization', `Bearer ${ADMIN_TOKEN}`);
const client = (t: request.Test) => t.set('Authorization', `Bearer ${CLIENT_TOKEN}`);
const refund = () =>
  client(request(app).post(`/api/agents/${agent}/tool-calls`)).send({
    tool: 'process_refund',
    input: { order_id: 'SCP-1042' },
    sender: 'mara@thescoop.com',
  });

const requests: [string, () => request.Test][] = [
  ['a dispatch of an offered tool', refund],
  [
    'a dispatch of a refused tool',
    () =>
      client(request(app).post(`/api/agents/${agent}/tool-calls`)).send({
        tool: 'send_email',
        input: { to: 'a@b.com', subject: 's', body: 'b' },
        sender: 'jane@acme.com',
      }),
  ],
  ['the resolution view', () => admin(request(app).get(`/api/agents/${agent}/tools`)).query({ sender: 'mara@thescoop.com' })],
  [
    'an admin write',
    () => admin(request(app).post('/api/toolkits')).send({ name: 'Made while frozen', member_tool_ids: ['lookup_order'] }),
  ],
  [
    'an email analysis',
    () =>
      client(request(app).post(`/api/agents/${agent}/email/analyze`)).send({ from: 'mara@thescoop.com', body: 'Please refund SCP-1042.' }),
  ],
];

beforeAll(async () => {
  db = await createTestDatabase();
  const target = new URL(db.url);
  proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port) });
  sequelize = createSequelize(proxy.url(db.url), { queryTimeoutMs: QUERY_TIMEOUT_MS, connectTimeoutMs: CONNECT_TIMEOUT_MS });
  tg = createToolgate({ sequelize, tools: SCOOP_TOOLS, adminToken: ADMIN_TOKEN, clientTokens: [CLIENT_TOKEN] });
  await ensureScoopData(sequelize);
  await tg.syncSystemToolkits();
  app = createApp(tg, { logger: createLogger(false) });
  const finance = (
    await admin(request(app).post('/api/toolkits'))
      .send({ name: 'Finance', member_tool_ids: ['process_refund', 'email_analyzer'] })
      .expect(201)
  ).body.id;
  agent = (await admin(request(app).post('/api/agents')).send({ name: 'Frozen', toolkit_ids: [] }).expect(201)).body.id;
  await admin(request(app).post(`/api/agents/${agent}/toolkits`))
    .send({ toolkit_id: finance, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] })
    .expect(201);
  // Several at once, so the pool holds open connections that the freeze will strand.
  await Promise.all(Array.from({ length: 4 }, () => admin(request(app).get(`/api/agents/${agent}/tools`)).expect(200)));
});

afterAll(async () => {
  // Its policy listener (the default) must not try to reconnect after the file's database is gone.
  await tg?.close().catch(() => undefined);
  proxy?.thaw();
  await sequelize?.close().catch(() => undefined);
  await proxy?.close();
  await db?.drop();
});

describe('when the database host freezes under the running app', () => {
  beforeAll(() => proxy.freeze());

  test.each(requests)('then %s answers 503 unavailable within the query timeout, not never', async (_name, send) => {
    const started = Date.now();
    const res = await send();
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 503, code: 'unavailable' });
    expect(Date.now() - started).toBeLessThan(ANSWER_WITHIN_MS);
  });
});

describe('when the host answers again', () => {
  beforeAll(() => proxy.thaw());

  test('then the same app serves by itself, and nothing ran while it was frozen', async () => {
    const deadline = Date.now() + 10_000;
    let last: request.Response | undefined;
    while (Date.now() < deadline) {
      last = await admin(request(app).get(`/api/agents/${agent}/tools`)).query({ sender: 'mara@thescoop.com' });
      if (last.status === 200) break;
      expect(last.status).toBe(503);
    }
    expect(last?.status).toBe(200);
    const [order] = await sequelize.query<{ status: string }>("SELECT status FROM scoop_orders WHERE id = 'SCP-1042'", {
      type: QueryTypes.SELECT,
    });
    expect(order?.status).toBe('delivered');
    const made = await sequelize.query("SELECT id FROM toolkits WHERE name = 'Made while frozen'", { type: QueryTypes.SELECT });
    expect(made).toEqual([]);
    const records = await sequelize.query('SELECT status FROM tool_calls WHERE agent_id = :agent', {
      replacements: { agent },
      type: QueryTypes.SELECT,
    });
    expect(records).toEqual([]);
  });

  test('then a run is granted again', async () => {
    const res = await refund().expect(200);
    expect(res.body).toMatchObject({ status: 'success', output: { refunded: true } });
  });
});
