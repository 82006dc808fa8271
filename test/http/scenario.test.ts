// The seed document's scenario, end to end over HTTP: one agent, different tools per caller, the
// gate checked per message and enforced at dispatch; the same toolkit on other terms; a scheduled
// run that draws only from attachments that allow it.
import { QueryTypes } from 'sequelize';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent } from '../support/factories';

let t: TestApp;
let sundae: number;
let scout: number;
let finance: number;

beforeAll(async () => {
  t = await createTestApp();
  const mk = async (name: string, members: string[]) =>
    (await t.admin().post('/api/toolkits').send({ name, member_tool_ids: members }).expect(201)).body.id as number;
  const support = await mk('Support', ['lookup_order', 'check_flavor_stock']);
  finance = await mk('Finance', ['process_refund']);
  const operations = await mk('Operations', ['check_flavor_stock', 'send_email']);

  sundae = await makeAgent(t, { name: 'Sundae', toolkit_ids: [support] });
  await t
    .admin()
    .post(`/api/agents/${sundae}/toolkits`)
    .send({ toolkit_id: finance, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] })
    .expect(201);

  scout = await makeAgent(t, { name: 'Scout', toolkit_ids: [] });
  await t.admin().post(`/api/agents/${scout}/toolkits`).send({ toolkit_id: finance }).expect(201);
  await t.admin().post(`/api/agents/${scout}/toolkits`).send({ toolkit_id: operations, allow_proactive: true }).expect(201);
});

afterAll(() => t.close());

const refund = (agent: number, sender: string, order = 'SCP-1042') =>
  t
    .client()
    .post(`/api/agents/${agent}/tool-calls`)
    .send({ tool: 'process_refund', input: { order_id: order }, sender });

describe('when Jane writes to Sundae', () => {
  test('then her run is offered the Support tools and not process_refund', async () => {
    const res = await t.admin().get(`/api/agents/${sundae}/tools`).query({ sender: 'jane@acme.com' }).expect(200);
    expect(res.body.tools).toEqual(['check_flavor_stock', 'lookup_order']);
    const financeGate = res.body.attachments.find((a: { toolkit_name: string }) => a.toolkit_name === 'Finance');
    expect(financeGate).toMatchObject({ admitted: false, reason: 'allow_list_default' });
  });

  test('then Sundae can look her order up', async () => {
    const res = await t
      .client()
      .post(`/api/agents/${sundae}/tool-calls`)
      .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' })
      .expect(200);
    expect(res.body).toMatchObject({ tool: 'lookup_order', status: 'success', output: { id: 'SCP-1042', flavor: 'Mint Chip' } });
  });

  test('then process_refund cannot be dispatched even by name, and the refusal is recorded', async () => {
    const res = await refund(sundae, 'jane@acme.com').expect(403);
    expect(res.body).toMatchObject({
      code: 'tool_forbidden',
      tool: 'process_refund',
      detail: expect.stringMatching(/^process_refund is not offered to this run: its gate admits listed senders only/),
    });
    const [order] = await t.sequelize.query("SELECT status FROM scoop_orders WHERE id = 'SCP-1042'", { type: QueryTypes.SELECT });
    expect(order).toEqual({ status: 'delivered' });
    const calls = await t.admin().get(`/api/agents/${sundae}/tool-calls`).expect(200);
    expect(calls.body[0]).toMatchObject({ tool_id: 'process_refund', status: 'denied', run: 'sender', routing_key: 'jane@acme.com' });
  });
});

describe('when Mara replies on the same thread', () => {
  test('then her run (display name, +tag, mixed case) is offered process_refund and the refund goes through', async () => {
    const view = await t.admin().get(`/api/agents/${sundae}/tools`).query({ sender: 'Mara <Mara+billing@TheScoop.com>' }).expect(200);
    expect(view.body.routing_key).toBe('mara@thescoop.com');
    expect(view.body.tools).toContain('process_refund');
    expect(view.body.attachments.find((a: { toolkit_name: string }) => a.toolkit_name === 'Finance')).toMatchObject({
      admitted: true,
      reason: 'allow_rule',
      matched_rule: { kind: 'allow', pattern: '*@thescoop.com' },
    });

    const res = await refund(sundae, 'Mara <Mara+billing@TheScoop.com>').expect(200);
    expect(res.body).toMatchObject({ status: 'success', output: { refunded: true, amount_cents: 1899 } });
    const calls = await t.admin().get(`/api/agents/${sundae}/tool-calls?limit=1`).expect(200);
    expect(calls.body).toEqual([
      expect.objectContaining({ tool_id: 'process_refund', status: 'success', routing_key: 'mara@thescoop.com' }),
    ]);
  });
});

describe('when Jane later writes "process another one"', () => {
  test('then her run still cannot touch process_refund: the gate is checked per message', async () => {
    await refund(sundae, 'jane@acme.com', 'SCP-1043').expect(403);
    const [order] = await t.sequelize.query("SELECT status FROM scoop_orders WHERE id = 'SCP-1043'", { type: QueryTypes.SELECT });
    expect(order).toEqual({ status: 'delivered' });
  });

  test('then a look-alike of the shop domain does not pass the Finance gate', async () => {
    await refund(sundae, 'mara@evilthescoop.com', 'SCP-1043').expect(403);
    await refund(sundae, 'mara@sub.thescoop.com', 'SCP-1043').expect(403);
    await refund(sundae, 'mara@thescoop.com.evil.com', 'SCP-1043').expect(403);
  });
});

describe('when Scout holds the same Finance toolkit with no rules', () => {
  test('then any sender who reaches Scout is offered process_refund', async () => {
    const res = await t.admin().get(`/api/agents/${scout}/tools`).query({ sender: 'jane@acme.com' }).expect(200);
    expect(res.body.tools).toContain('process_refund');
    expect(res.body.attachments.find((a: { toolkit_name: string }) => a.toolkit_name === 'Finance')).toMatchObject({
      admitted: true,
      reason: 'no_rules',
    });
  });
});

describe("when Scout's morning stock report runs on schedule", () => {
  test('then the run gets the Operations tools only, because only that attachment allows scheduled runs', async () => {
    const res = await t.admin().get(`/api/agents/${scout}/tools`).query({ scheduled: 'true' }).expect(200);
    expect(res.body).toMatchObject({ run: 'scheduled', routing_key: null, tools: ['check_flavor_stock', 'send_email'] });
    expect(res.body.attachments.map((a: { toolkit_name: string; reason: string }) => [a.toolkit_name, a.reason])).toEqual([
      ['Finance', 'proactive_off'],
      ['Operations', 'proactive_allowed'],
    ]);
  });

  test('then the scheduler can dispatch check_flavor_stock and send_email, and not process_refund', async () => {
    await t.scheduler().post(`/api/agents/${scout}/tool-calls`).send({ tool: 'check_flavor_stock', scheduled: true }).expect(200);
    await t
      .scheduler()
      .post(`/api/agents/${scout}/tool-calls`)
      .send({ tool: 'send_email', scheduled: true, input: { to: 'mara@thescoop.com', subject: 'Stock', body: 'Strawberry is out.' } })
      .expect(200);
    const res = await t
      .scheduler()
      .post(`/api/agents/${scout}/tool-calls`)
      .send({ tool: 'process_refund', scheduled: true, input: { order_id: 'SCP-1050' } })
      .expect(403);
    expect(res.body.code).toBe('tool_forbidden');
    const calls = await t.admin().get(`/api/agents/${scout}/tool-calls?limit=3`).expect(200);
    expect(calls.body.map((c: { tool_id: string; status: string; run: string }) => [c.tool_id, c.status, c.run])).toEqual([
      ['process_refund', 'denied', 'scheduled'],
      ['send_email', 'success', 'scheduled'],
      ['check_flavor_stock', 'success', 'scheduled'],
    ]);
  });

  test('then a client token cannot start a scheduled run', async () => {
    const res = await t.client().post(`/api/agents/${scout}/tool-calls`).send({ tool: 'check_flavor_stock', scheduled: true }).expect(403);
    expect(res.body.code).toBe('forbidden');
  });
});
