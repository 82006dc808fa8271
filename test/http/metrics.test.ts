// GET /metrics: the Prometheus text for the metrics token or the admin token only, counting what
// toolgate decided and how, and never carrying a sender, a routing key, a token or a message.
import request from 'supertest';
import type { Express } from 'express';
import { once } from 'node:events';
import type { ListenedPolicies } from '../../src/run/listened-policies';
import { createToolgate, internalsOf } from '../../src/toolgate';
import { ADMIN_TOKEN, CLIENT_TOKEN, SCHEDULER_TOKEN, createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
let t: TestApp;
let app: Express;
let sundae: number;

beforeAll(async () => {
  t = await createTestApp({ metricsToken: METRICS_TOKEN });
  app = t.app;
  // The cache serves runs once the listener holds (it starts with the first run); until then every
  // run reads through.
  const policies = internalsOf(t.tg).runs.policies as ListenedPolicies;
  policies.start();
  if (policies.listenerState !== 'listening') await once(policies, 'listening');
  const finance = await makeToolkit(t, 'Finance', ['process_refund']);
  sundae = await makeAgent(t, { name: 'Sundae', toolkit_ids: [] });
  await t
    .admin()
    .post(`/api/agents/${sundae}/toolkits`)
    .send({ toolkit_id: finance, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] })
    .expect(201);
});
afterAll(() => t.close());

const scrape = (token?: string) => {
  const r = request(app).get('/metrics');
  return token ? r.set('Authorization', `Bearer ${token}`) : r;
};

describe('when /metrics is asked for', () => {
  test('then without a token it is a 401 in the JSON error shape', async () => {
    const res = await scrape().expect(401);
    expect(res.body).toMatchObject({ code: 'unauthenticated', detail: expect.any(String) });
  });

  test("then an unknown token is a 401, and a client's or the scheduler's token a 403", async () => {
    await scrape('not-a-known-token-0123456789').expect(401);
    expect((await scrape(CLIENT_TOKEN).expect(403)).body.code).toBe('forbidden');
    expect((await scrape(SCHEDULER_TOKEN).expect(403)).body.code).toBe('forbidden');
  });

  test('then the metrics token may call no other route', async () => {
    const res = await request(app).get('/api/toolkits').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(403);
    expect(res.body.code).toBe('forbidden');
  });

  test("then a metrics token that is another role's token too is refused when the toolgate is made", () => {
    expect(() => createToolgate({ sequelize: t.sequelize, adminToken: ADMIN_TOKEN, metricsToken: ADMIN_TOKEN })).toThrow(
      expect.objectContaining({ code: 'ERR_TOOLGATE_SHARED_TOKEN' }),
    );
  });

  test('then the metrics token and the admin token read the Prometheus text', async () => {
    for (const token of [METRICS_TOKEN, ADMIN_TOKEN]) {
      const res = await scrape(token).expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(res.text).toContain('# TYPE toolgate_decisions_total counter');
    }
  });
});

describe('when runs have been granted, refused and skipped', () => {
  let text: string;

  beforeAll(async () => {
    // Sundae: Jane is refused process_refund; Mara is granted it, twice (a cache hit).
    await t
      .client()
      .post(`/api/agents/${sundae}/tool-calls`)
      .send({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' })
      .expect(403);
    await t
      .client()
      .post(`/api/agents/${sundae}/tool-calls`)
      .send({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender: 'Mara <mara+billing@thescoop.com>' })
      .expect(200);
    await t
      .client()
      .post(`/api/agents/${sundae}/tool-calls`)
      .send({ tool: 'process_refund', input: { order_id: 'SCP-1043' }, sender: 'mara@thescoop.com' })
      .expect(200);
    await t.client().post(`/api/agents/${sundae}/tool-calls`).send({ tool: 'no_such_tool', sender: 'mara@thescoop.com' }).expect(403);
    text = (await scrape(METRICS_TOKEN).expect(200)).text;
  });

  const value = (line: RegExp) => Number(line.exec(text)?.[1] ?? NaN);

  test("then decisions are counted by outcome and reason, the refusal with the gate's reason", () => {
    expect(value(/^toolgate_decisions_total\{outcome="granted",reason="offered"\} (\d+)$/m)).toBeGreaterThanOrEqual(2);
    expect(value(/^toolgate_decisions_total\{outcome="refused",reason="allow_list_default"\} (\d+)$/m)).toBe(1);
    expect(value(/^toolgate_decisions_total\{outcome="refused",reason="not_carried"\} (\d+)$/m)).toBe(1);
  });

  test("then tool calls are counted by status, with the listener's state and the pool's", () => {
    expect(value(/^toolgate_tool_calls_total\{status="denied"\} (\d+)$/m)).toBe(2);
    expect(value(/^toolgate_tool_calls_total\{status="success"\} (\d+)$/m)).toBe(2);
    // A call is counted once, by how it ended, not again for its started record.
    expect(text).not.toMatch(/^toolgate_tool_calls_total\{status="started"\}/m);
    expect(value(/^toolgate_policy_listener_state\{state="listening"\} (\d+)$/m)).toBe(1);
    expect(text).toMatch(/^toolgate_db_pool_connections\{state="size"\} \d+$/m);
  });

  test('then a warm cache hit is counted but not timed, and a run that read its policy is timed', () => {
    expect(value(/^toolgate_policy_cache_requests_total\{outcome="hit"\} (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(text).not.toMatch(/^toolgate_gate_duration_seconds_count\{cache="hit"\}/m);
    expect(text).toMatch(/^toolgate_gate_duration_seconds_count\{cache="(?:miss|bypass)"\} [1-9]\d*$/m);
  });

  test('then no label or value carries a sender, a routing key, a token or a tool input', () => {
    for (const secret of ['@', 'mara', 'jane', 'thescoop', 'acme', 'SCP-', ADMIN_TOKEN, CLIENT_TOKEN, METRICS_TOKEN])
      expect(text).not.toContain(secret);
  });
});

describe('when a call is over its cap', () => {
  test('then the refusal is counted with the reason cap_exceeded', async () => {
    const lookups = await makeToolkit(t, 'Lookups', ['lookup_order']);
    const capped = await makeAgent(t, { name: 'Capped', toolkit_ids: [] });
    await t
      .admin()
      .post(`/api/agents/${capped}/toolkits`)
      .send({ toolkit_id: lookups, caps: [{ tool_id: null, per: 'agent', limit: 1, window: '1h' }] })
      .expect(201);
    const call = () =>
      t
        .client()
        .post(`/api/agents/${capped}/tool-calls`)
        .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' });
    await call().expect(200);
    await call().expect(403);
    const text = (await scrape(METRICS_TOKEN).expect(200)).text;
    expect(text).toMatch(/^toolgate_decisions_total\{outcome="refused",reason="cap_exceeded"\} 1$/m);
  });
});
