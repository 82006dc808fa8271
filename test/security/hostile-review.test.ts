// The hostile review's findings (issue 8), each reproduced over HTTP and named by the behaviour that
// now holds. docs/SECURITY.md lists them as a table: class, cause, fix, and the test here.
import { domainToASCII } from 'node:url';
import { QueryTypes } from 'sequelize';
import request from 'supertest';
import { z } from 'zod';
import { authenticatedSender } from '../../middleware/sender-check';
import { toolIdSchema } from '../../src/core/types';
import { SCOOP_TOOLS } from '../../src/app/demo/scoop-tools';
import { defineTool } from '../../src/tools/tool-registry';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

const ID = 'mx.thescoop.com';

/** A tool that waits until the test lets it finish, so its record can be read while it runs. */
let releaseSlowTool: () => void = () => undefined;
let slowToolStarted: () => void = () => undefined;
const slowTool = defineTool({
  id: 'slow_report',
  display_name: 'Slow report',
  summary: 'Takes its time.',
  input: z.strictObject({}).optional(),
  execute: () =>
    new Promise((resolve) => {
      releaseSlowTool = () => resolve({ done: true });
      slowToolStarted();
    }),
});

let t: TestApp;
let open: number;
let gated: number;

const orderStatus = async (id: string, app = t) =>
  (
    await app.sequelize.query<{ status: string }>('SELECT status FROM scoop_orders WHERE id = :id', {
      replacements: { id },
      type: QueryTypes.SELECT,
    })
  )[0]?.status;
const records = (agent: number, app = t) =>
  app.sequelize.query<{ id: string; tool_id: string; status: string; routing_key: string | null; error: string | null }>(
    'SELECT id, tool_id, status, routing_key, error FROM tool_calls WHERE agent_id = :agent ORDER BY id',
    { replacements: { agent }, type: QueryTypes.SELECT },
  );
const dispatch = (agent: number, body: Record<string, unknown>) => t.client().post(`/api/agents/${agent}/tool-calls`).send(body);

/** Two agents over the same toolkits: one holds them openly, one behind *@thescoop.com. */
async function arrange(app: TestApp): Promise<{ open: number; gated: number }> {
  const everything = await makeToolkit(app, 'Everything', ['process_refund', 'lookup_order', 'slow_report']);
  const finance = await makeToolkit(app, 'Finance', ['process_refund']);
  // An open attachment admits runs with no routing key too, so a tool runs whatever the sender.
  const openAgent = await makeAgent(app, { name: 'Open', toolkit_ids: [everything] });
  const gatedAgent = await makeAgent(app, { name: 'Gated', toolkit_ids: [] });
  await app
    .admin()
    .post(`/api/agents/${gatedAgent}/toolkits`)
    .send({ toolkit_id: finance, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] })
    .expect(201);
  await app
    .admin()
    .post(`/api/agents/${gatedAgent}/toolkits`)
    .send({ toolkit_id: everything, allow_proactive: true, rules: [{ kind: 'allow', pattern: 'nobody@thescoop.com' }] })
    .expect(201);
  return { open: openAgent, gated: gatedAgent };
}

beforeAll(async () => {
  t = await createTestApp({ tools: [...SCOOP_TOOLS, slowTool] });
  ({ open, gated } = await arrange(t));
});

afterAll(() => t.close());

describe('finding 1: a tool runs and leaves no record', () => {
  test("when an authenticated sender's key would pass 320 characters as punycode, then the run has no key and the tool that runs is recorded", async () => {
    const withAuth = await createTestApp({ tools: [...SCOOP_TOOLS, slowTool], senderCheck: authenticatedSender(ID) });
    try {
      const agents = await arrange(withAuth);
      const domain = `${'é.'.repeat(30)}evil.com`;
      const res = await withAuth
        .client()
        .post(`/api/agents/${agents.open}/tool-calls`)
        .send({
          tool: 'process_refund',
          input: { order_id: 'SCP-1043' },
          sender: `${'a'.repeat(75)}@${domain}`,
          authentication_results: [`${ID}; dmarc=pass header.from=${domainToASCII(domain)}`],
        })
        .expect(200);
      expect(res.body).toMatchObject({ status: 'success', output: { refunded: true } });
      expect(await records(agents.open, withAuth)).toEqual([
        expect.objectContaining({ tool_id: 'process_refund', status: 'success', routing_key: null }),
      ]);
    } finally {
      await withAuth.close();
    }
  });

  test('when the record cannot be written, then the tool does not run', async () => {
    await t.sequelize.query(`
      CREATE FUNCTION refuse_refund_records() RETURNS trigger AS $$
      BEGIN IF NEW.tool_id = 'process_refund' THEN RAISE EXCEPTION 'records refused'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
      CREATE TRIGGER refuse_refund_records BEFORE INSERT ON tool_calls FOR EACH ROW EXECUTE FUNCTION refuse_refund_records();`);
    try {
      const res = await dispatch(open, { tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender: 'mara@thescoop.com' });
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(await orderStatus('SCP-1042')).toBe('delivered');
    } finally {
      await t.sequelize.query('DROP TRIGGER refuse_refund_records ON tool_calls; DROP FUNCTION refuse_refund_records();');
    }
  });

  test('when a tool is running, then its record already says started, and it is completed in place', async () => {
    const started = new Promise<void>((resolve) => (slowToolStarted = resolve));
    const pending = dispatch(open, { tool: 'slow_report', sender: 'mara@thescoop.com' }).then((r) => r);
    await started;
    const during = (await records(open)).filter((r) => r.tool_id === 'slow_report');
    expect(during).toEqual([expect.objectContaining({ status: 'started' })]);
    releaseSlowTool();
    expect((await pending).status).toBe(200);
    const after = (await records(open)).filter((r) => r.tool_id === 'slow_report');
    expect(after).toEqual([expect.objectContaining({ id: during[0]?.id, status: 'success' })]);
  });
});

describe('finding 2: a tool id from Object.prototype', () => {
  // Which answer each name gets is known in advance: a snake_case id is a tool id nobody offers (a
  // refusal, recorded), anything else is not a tool id at all (a 422, nothing recorded).
  test.each(Object.getOwnPropertyNames(Object.prototype))(
    'when a caller dispatches %s, then a snake_case one is refused and recorded, any other is a 422 with no record, never a 500',
    async (name) => {
      const wellFormed = toolIdSchema.safeParse(name).success;
      const before = (await records(gated)).length;
      const res = await dispatch(gated, { tool: name, sender: 'mara@thescoop.com' });
      expect(res.status).toBe(wellFormed ? 403 : 422);
      expect(res.body).toMatchObject(wellFormed ? { code: 'tool_forbidden', tool: name } : { code: 'validation_error' });
      const after = await records(gated);
      expect(after.slice(before)).toEqual(wellFormed ? [expect.objectContaining({ tool_id: name, status: 'denied' })] : []);
    },
  );

  test('when "constructor" is dispatched, then it is refused with a denied record', async () => {
    await dispatch(gated, { tool: 'constructor', sender: 'mara@thescoop.com' }).expect(403);
    expect((await records(gated)).at(-1)).toMatchObject({ tool_id: 'constructor', status: 'denied' });
  });
});

describe('finding 3: the scheduler token and sender runs', () => {
  test('when the scheduler token dispatches for a sender, then it is forbidden and nothing runs', async () => {
    const before = (await records(gated)).length;
    const res = await t
      .scheduler()
      .post(`/api/agents/${gated}/tool-calls`)
      .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'nobody@thescoop.com' })
      .expect(403);
    expect(res.body.code).toBe('forbidden');
    expect(await records(gated)).toHaveLength(before);
  });

  test('when the scheduler token names no sender and no schedule, then it is forbidden too', async () => {
    const res = await t
      .scheduler()
      .post(`/api/agents/${gated}/tool-calls`)
      .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' } })
      .expect(403);
    expect(res.body.code).toBe('forbidden');
  });

  test('when the scheduler token starts a scheduled run, then it draws on attachments allowed on scheduled runs', async () => {
    const res = await t
      .scheduler()
      .post(`/api/agents/${gated}/tool-calls`)
      .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, scheduled: true })
      .expect(200);
    expect(res.body.status).toBe('success');
  });
});

describe('finding 6: a tool that throws', () => {
  test("when the tool throws, then the answer is 200 with status failure and the tool's own error, recorded as failure", async () => {
    const res = await dispatch(gated, { tool: 'process_refund', input: { order_id: 'SCP-9999' }, sender: 'mara@thescoop.com' }).expect(200);
    expect(res.body).toEqual({ tool: 'process_refund', status: 'failure', error: 'no order SCP-9999' });
    expect((await records(gated)).at(-1)).toMatchObject({ tool_id: 'process_refund', status: 'failure', error: 'no order SCP-9999' });
  });
});

describe('finding 7: ids that are not canonical decimals', () => {
  const forms = ['1e0', '0x1', '00001', '+1', '%201', '1%20', '1.0', '-1', '0'];

  test.each(forms)('when an agent path id is %s, then it is a 422 naming the path, on every kind of route', async (form) => {
    const path = (p: string) => p.replace(':id', form);
    for (const [method, url, who] of [
      ['get', '/api/agents/:id', t.admin()],
      ['get', '/api/agents/:id/tools', t.admin()],
      ['post', '/api/agents/:id/tool-calls', t.client()],
      ['get', '/api/toolkits/:id', t.admin()],
      ['get', `/api/agents/${gated}/toolkits/:id`, t.admin()],
    ] as const) {
      const res = await who[method](path(url)).send(method === 'post' ? { tool: 'lookup_order', sender: 'x@y.com' } : undefined);
      expect([res.status, res.body.code, url]).toEqual([422, 'validation_error', url]);
      expect(res.body.detail[0].loc[0]).toBe('path');
    }
  });

  test('when a body id is a non-canonical string, then it is a 422', async () => {
    const res = await t.admin().post(`/api/agents/${gated}/toolkits`).send({ toolkit_id: '0x1' }).expect(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'toolkit_id']);
  });

  test('when an id is canonical but beyond every row, then it is a 404', async () => {
    await t.admin().get('/api/agents/9999999999999999').expect(404);
  });
});

describe('finding 8: a routing key that names another domain', () => {
  test.each(['mara@thescoop.com/evil.org', 'Mara <mara@thescoop.com?x.org>', 'mara@thescoop.com#x', 'mara@-thescoop.com'])(
    'when the sender is %s, then the run has no key and the gated refund is refused',
    async (sender) => {
      const res = await t
        .client()
        .post(`/api/agents/${gated}/tool-calls`)
        .send({ tool: 'process_refund', input: { order_id: 'SCP-1050' }, sender })
        .expect(403);
      expect(res.body.code).toBe('tool_forbidden');
      expect((await records(gated)).at(-1)).toMatchObject({ tool_id: 'process_refund', status: 'denied', routing_key: null });
      expect(await orderStatus('SCP-1050')).toBe('shipped');
    },
  );

  test('when the explain view is asked about such a sender, then it shows no routing key', async () => {
    const res = await t.admin().get(`/api/agents/${gated}/tools`).query({ sender: 'test@iana/icann.org' }).expect(200);
    expect(res.body.routing_key).toBeNull();
  });
});

test('the app answers (a sanity check of the fixture)', async () => {
  await request(t.app).get('/healthz').expect(200);
});
