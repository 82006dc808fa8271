// A body sent as something other than JSON (curl -d without a content type sends a form) on a route
// that reads JSON (issue 29): before, the route saw no body, and answered a 422 "expected object,
// received undefined", or, on a host route behind toolRun(), a run with no sender, refused 403 and
// recorded as denied. Now it is a 415 that says to send JSON, and nothing is read, run or recorded;
// forms meant for a host's own routes still reach them.
import { QueryTypes } from 'sequelize';
import express from 'express';
import request from 'supertest';
import { currentRun } from '../../middleware/current-run';
import { createTestApp, CLIENT_TOKEN, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;
let agent: number;

beforeAll(async () => {
  t = await createTestApp();
  const kit = await makeToolkit(t, 'Analysis', ['email_analyzer', 'lookup_order']);
  agent = await makeAgent(t, { name: 'Gated', toolkit_ids: [] });
  await t
    .admin()
    .post(`/api/agents/${agent}/toolkits`)
    .send({ toolkit_id: kit, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] })
    .expect(201);
});

afterAll(() => t.close());

const recordCount = async () =>
  Number(
    (
      await t.sequelize.query<{ n: string }>('SELECT count(*) AS n FROM tool_calls WHERE agent_id = :agent', {
        replacements: { agent },
        type: QueryTypes.SELECT,
      })
    )[0]!.n,
  );

const unsupported = {
  code: 'unsupported_media_type',
  detail: expect.stringContaining('Content-Type: application/json'),
};

describe('when a route of the router that reads JSON is sent a form, as curl -d sends it', () => {
  test.each([
    ['tool-calls', { tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'mara@thescoop.com' }],
    ['messages', { message: { from: 'mara@thescoop.com', body: 'Where is my order?' } }],
    ['email/analyze', { from: 'mara@thescoop.com', body: 'My order arrived melted.' }],
  ])('then POST %s is a 415 unsupported_media_type that says to send JSON, and nothing is recorded', async (route, body) => {
    const before = await recordCount();
    const res = await t.client().post(`/api/agents/${agent}/${route}`).type('form').send(JSON.stringify(body)).expect(415);
    expect(res.body).toMatchObject({ ...unsupported, detail: expect.stringContaining('"application/x-www-form-urlencoded"') });
    expect(await recordCount()).toBe(before);
  });

  test('then a body with an empty Content-Type is the same 415, saying it had none', async () => {
    const res = await request(t.app)
      .post(`/api/agents/${agent}/tool-calls`)
      .set('Authorization', `Bearer ${CLIENT_TOKEN}`)
      .set('Content-Type', '')
      .send(Buffer.from('{"tool":"lookup_order","input":{"order_id":"SCP-1042"},"sender":"mara@thescoop.com"}'))
      .expect(415);
    expect(res.body).toMatchObject({ ...unsupported, detail: expect.stringContaining('with no Content-Type') });
  });

  test('then the same body sent as JSON is served', async () => {
    await t
      .client()
      .post(`/api/agents/${agent}/tool-calls`)
      .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'mara@thescoop.com' })
      .expect(200);
  });
});

describe("when a host's route behind toolRun() is sent a form", () => {
  function hostApp(parse: express.RequestHandler): express.Express {
    const app = express();
    app.post('/triage/:id', parse, t.tg.toolRun(), t.tg.requireTool('email_analyzer'), (req, res) => {
      res.json({ routing_key: currentRun(req).routingKey });
    });
    app.use(t.tg.errorHandler());
    return app;
  }

  test('then, with express.json() before it, it is a 415 that says to send JSON, not a run with no sender, and nothing is recorded', async () => {
    const before = await recordCount();
    const res = await request(hostApp(express.json()))
      .post(`/triage/${agent}`)
      .type('form')
      .send('{"from":"mara@thescoop.com"}')
      .expect(415);
    expect(res.body).toMatchObject(unsupported);
    expect(await recordCount()).toBe(before);
  });

  test('then, when the host parses forms itself, toolRun() reads the sender from the form, as the host chose', async () => {
    const res = await request(hostApp(express.urlencoded({ extended: false })))
      .post(`/triage/${agent}`)
      .type('form')
      .send('from=mara%40thescoop.com')
      .expect(200);
    expect(res.body).toEqual({ routing_key: 'mara@thescoop.com' });
  });
});

describe('when a host mounts the router at its root, before form routes of its own', () => {
  test("then a form posted to the host's route still reaches it, parsed", async () => {
    const app = express();
    app.use(t.tg.router);
    app.post('/contact', express.urlencoded({ extended: false }), (req, res) => {
      res.json(req.body);
    });
    const res = await request(app).post('/contact').type('form').send('name=Jane').expect(200);
    expect(res.body).toEqual({ name: 'Jane' });
  });
});
