// Issue 29, item 2: the schema undone under a running service (npm run migrate -- --undo, forced, or
// run while the instance was not yet registered). The service's database answers, but toolgate's
// tables are gone: every request is a 503 with its own code that says to run the migrations, never
// a 500, and nothing is made again outside the migrations, /readyz included.
import type { Express } from 'express';
import { QueryTypes, type Sequelize } from 'sequelize';
import request from 'supertest';
import { migrateDown } from '../../src/db/migrate';
import { createApp } from '../../src/app/app';
import { createLogger } from '../../src/app/logger';
import { SCOOP_TOOLS } from '../../src/app/demo/scoop-tools';
import { senderAsGiven } from '../../middleware/sender-check';
import { createToolgate, type Toolgate } from '../../src/toolgate';
import { signedIn, type Visitor } from '../dashboard/session';
import { ADMIN_TOKEN, CLIENT_TOKEN } from '../support/app';
import { createTestDatabase, type TestDatabase } from '../support/database';

let db: TestDatabase;
let sql: Sequelize;
let tg: Toolgate;
let app: Express;
let agent: number;
let operator: Visitor;

const admin = (t: request.Test) => t.set('Authorization', `Bearer ${ADMIN_TOKEN}`);
const client = (t: request.Test) => t.set('Authorization', `Bearer ${CLIENT_TOKEN}`);

const tables = async () =>
  (
    await sql.query<{ t: string }>(
      `SELECT tablename AS t FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
      {
        type: QueryTypes.SELECT,
      },
    )
  ).map((r) => r.t);

beforeAll(async () => {
  db = await createTestDatabase();
  sql = db.sequelize;
  // As the service runs: the shared rate limit counted in PostgreSQL, the dashboard on.
  tg = createToolgate({
    sequelize: sql,
    tools: SCOOP_TOOLS,
    adminToken: ADMIN_TOKEN,
    clientTokens: [CLIENT_TOKEN],
    senderCheck: senderAsGiven,
    rateLimit: { windowMs: 60_000, limit: 120, store: 'postgres' },
  });
  await tg.syncSystemToolkits();
  app = createApp(tg, { logger: createLogger(false), dashboard: { adminToken: ADMIN_TOKEN } });
  agent = (await admin(request(app).post('/api/agents')).send({ name: 'Sundae' }).expect(201)).body.id;
  await client(request(app).post(`/api/agents/${agent}/tool-calls`))
    .send({ tool: 'task_creator', input: { title: 'Call Jane back' }, sender: 'jane@acme.com' })
    .expect(200);
  operator = await signedIn(app);

  // What npm run migrate -- --undo does to the database: every migration reverted, then SequelizeMeta dropped.
  await migrateDown(sql, { to: 0 });
  await sql.query('DROP TABLE "SequelizeMeta"');
  expect(await tables()).toEqual([]);
});

afterAll(async () => {
  await tg.close();
  await db.drop();
});

describe("when toolgate's tables are gone from under a running service", () => {
  const calls: [string, () => request.Test][] = [
    [
      'a dispatch by a client, through the shared rate limit',
      () =>
        client(request(app).post(`/api/agents/${agent}/tool-calls`)).send({
          tool: 'task_creator',
          input: { title: 'Again' },
          sender: 'jane@acme.com',
        }),
    ],
    [
      'an agent run',
      () => client(request(app).post(`/api/agents/${agent}/messages`)).send({ message: { from: 'jane@acme.com', body: 'Hello' } }),
    ],
    ["the admin's list of agents", () => admin(request(app).get('/api/agents'))],
    ["the admin's new agent", () => admin(request(app).post('/api/agents')).send({ name: 'Scout' })],
    ["the admin's toolkits", () => admin(request(app).get('/api/toolkits'))],
    ['the explanation of a run', () => admin(request(app).get(`/api/agents/${agent}/tools?sender=jane@acme.com`))],
  ];

  test.each(calls)('then %s is a 503 tables_missing that says to run the migrations, never a 500', async (_name, call) => {
    const res = await call();
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'tables_missing', detail: expect.stringContaining('Run the migrations') });
    expect(res.headers['retry-after']).toBe('30');
  });

  test("then the dashboard's pages are a 503 page that says so too", async () => {
    const page = await operator.get('/admin/agents');
    expect(page.status).toBe(503);
    expect(page.text).toContain('Run the migrations');
  });

  test('then /readyz is a 503 that lists every migration as pending', async () => {
    const res = await request(app).get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ status: 'migrating', code: 'unavailable' });
    expect(res.body.pending).toContain('20261130000001-create-agents.ts');
  });

  test('then nothing was made again: no SequelizeMeta after /readyz and the calls above, nor any other table', async () => {
    for (let i = 0; i < 3; i++) await request(app).get('/readyz');
    await admin(request(app).get('/api/agents'));
    expect(await tables()).toEqual([]);
  });

  test('then tg.migrate() brings them back, and the same service serves again', async () => {
    await tg.migrate();
    await tg.syncSystemToolkits();
    expect((await request(app).get('/readyz')).status).toBe(200);
    await admin(request(app).post('/api/agents')).send({ name: 'Sundae' }).expect(201);
  });
});
