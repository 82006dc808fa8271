// POST /policy/preview (SEMANTICS §15) on the demo's recorded traffic: The Scoop as seeded (Sundae
// with Support open and Finance behind *@thescoop.com; Scout behind her access rule *@thescoop.com,
// with Finance open and Operations for scheduled runs), Jane's, Mara's and the shop's calls made
// through the dispatch path, then each kind of change previewed.
import { Client } from 'pg';
import { QueryTypes } from 'sequelize';
import { seedUp } from '../../src/db/migrate';
import { TOOLGATE_TABLES } from '../../src/db/toolgate-tables';
import { createTestApp, type TestApp } from '../support/app';

let t: TestApp;
const ids = { sundae: 0, scout: 0, sundaeFinance: 0, scoutOperations: 0, finance: 0 };
const calls = { janeLookup: 0, janeRefund: 0, maraFirstRefund: 0, maraSecondRefund: 0, shopRefund: 0, scheduledStock: 0 };

const one = async <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  (await t.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT }))[0]!;
const lastCall = async (agentId: number) =>
  Number((await one<{ id: string }>('SELECT max(id) AS id FROM tool_calls WHERE agent_id = :agentId', { agentId })).id);

const call = async (agentId: number, body: Record<string, unknown>, status: number, as: 'client' | 'scheduler' = 'client') => {
  await t[as]().post(`/api/agents/${agentId}/tool-calls`).send(body).expect(status);
  return lastCall(agentId);
};

const preview = async (change: Record<string, unknown>) => (await t.admin().post('/api/policy/preview').send({ change }).expect(200)).body;

beforeAll(async () => {
  t = await createTestApp();
  await seedUp(t.sequelize);
  const agent = async (name: string) => (await one<{ id: number }>('SELECT id FROM agents WHERE name = :name', { name })).id;
  ids.sundae = await agent('Sundae');
  ids.scout = await agent('Scout');
  const attachment = async (agentId: number, toolkit: string) =>
    (
      await one<{ id: number }>(
        'SELECT at.id FROM agent_toolkits at JOIN toolkits k ON k.id = at.toolkit_id WHERE at.agent_id = :agentId AND k.name = :toolkit',
        { agentId, toolkit },
      )
    ).id;
  ids.sundaeFinance = await attachment(ids.sundae, 'Finance');
  ids.scoutOperations = await attachment(ids.scout, 'Operations');
  ids.finance = (await one<{ id: number }>("SELECT id FROM toolkits WHERE name = 'Finance'")).id;

  const jane = 'jane@acme.com';
  const mara = 'mara@thescoop.com';
  calls.janeLookup = await call(ids.sundae, { tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: jane }, 200);
  calls.janeRefund = await call(ids.sundae, { tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender: jane }, 403);
  calls.maraFirstRefund = await call(ids.sundae, { tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender: mara }, 200);
  calls.maraSecondRefund = await call(ids.sundae, { tool: 'process_refund', input: { order_id: 'SCP-1043' }, sender: mara }, 200);
  calls.shopRefund = await call(ids.scout, { tool: 'process_refund', input: { order_id: 'SCP-1050' }, sender: 'ops@thescoop.com' }, 200);
  calls.scheduledStock = await call(ids.scout, { tool: 'check_flavor_stock', input: {}, scheduled: true }, 200, 'scheduler');
});

afterAll(() => t.close());

describe('when an operator previews a change against the demo traffic', () => {
  test("then opening Finance shows Jane's refused refund as one that would have run, and Jane gaining the refund", async () => {
    const impact = await preview({ update: { attachment_id: ids.sundaeFinance, rules: [] } });
    expect(impact.calls.changed).toEqual([
      expect.objectContaining({
        call_id: calls.janeRefund,
        agent_id: ids.sundae,
        tool_id: 'process_refund',
        was: 'denied',
        would_be: 'started',
      }),
    ]);
    expect(impact.calls.counts).toEqual({ refused: 0, admitted: 1, pending_approval: 0, cap_exceeded: 0 });
    expect(impact.senders.gaining).toEqual([{ routing_key: 'jane@acme.com', agent_id: ids.sundae, tools: ['process_refund'], runs: 2 }]);
    expect(impact.senders.losing).toEqual([]);
  });

  test('then a cap of one a day per sender flags only the second refund', async () => {
    const impact = await preview({ update: { attachment_id: ids.sundaeFinance, caps: [{ per: 'sender', limit: 1, window: '1d' }] } });
    expect(impact.calls.changed).toEqual([
      expect.objectContaining({
        call_id: calls.maraSecondRefund,
        routing_key: 'mara@thescoop.com',
        was: 'success',
        would_be: 'denied',
        reason: 'cap_exceeded',
      }),
    ]);
    expect(impact.calls.counts).toEqual({ refused: 0, admitted: 0, pending_approval: 0, cap_exceeded: 1 });
    expect(impact.senders).toEqual({ gaining: [], losing: [] });
  });

  test('then approval on Finance shows the refunds that ran as calls that would wait for approval', async () => {
    const impact = await preview({ update: { attachment_id: ids.sundaeFinance, approval: { approvers: [] } } });
    expect(impact.calls.changed.map((c: { call_id: number }) => c.call_id)).toEqual([calls.maraFirstRefund, calls.maraSecondRefund]);
    expect(impact.calls.counts.pending_approval).toBe(2);
  });

  test("then a toolkit's edit reaches every agent holding it", async () => {
    const impact = await preview({ toolkit: { toolkit_id: ids.finance, member_tool_ids: [] } });
    expect(impact.senders.losing).toEqual(
      expect.arrayContaining([
        { routing_key: 'mara@thescoop.com', agent_id: ids.sundae, tools: ['process_refund'], runs: 2 },
        { routing_key: 'ops@thescoop.com', agent_id: ids.scout, tools: ['process_refund'], runs: 1 },
      ]),
    );
    expect(impact.calls.changed.map((c: { call_id: number }) => c.call_id).sort((a: number, b: number) => a - b)).toEqual([
      calls.maraFirstRefund,
      calls.maraSecondRefund,
      calls.shopRefund,
    ]);
    expect(impact.calls.counts.refused).toBe(3);
  });

  test('then access rules that refuse a sender refuse everything she was offered, and what ran is refused', async () => {
    const impact = await preview({ access_rules: { agent_id: ids.sundae, rules: [{ kind: 'deny', pattern: 'Jane@Acme.com' }] } });
    expect(impact.senders.losing).toEqual([
      { routing_key: 'jane@acme.com', agent_id: ids.sundae, tools: ['check_flavor_stock', 'lookup_order'], runs: 2 },
    ]);
    expect(impact.calls.changed).toEqual([
      expect.objectContaining({ call_id: calls.janeLookup, was: 'success', would_be: 'denied', reason: 'access_rules' }),
    ]);
  });

  test('then turning off scheduled runs shows the scheduled run losing its tools', async () => {
    const impact = await preview({ update: { attachment_id: ids.scoutOperations, allow_proactive: false } });
    expect(impact.scheduled.losing).toEqual([{ agent_id: ids.scout, tools: ['check_flavor_stock', 'send_email'], runs: 1 }]);
    expect(impact.calls.changed).toEqual([
      expect.objectContaining({ call_id: calls.scheduledStock, was: 'success', would_be: 'denied', reason: 'not_offered' }),
    ]);
  });

  test('then detaching Finance from Sundae shows Mara losing the refund', async () => {
    const impact = await preview({ detach: { attachment_id: ids.sundaeFinance } });
    expect(impact.senders.losing).toEqual([{ routing_key: 'mara@thescoop.com', agent_id: ids.sundae, tools: ['process_refund'], runs: 2 }]);
  });

  test('then attaching Operations to Sundae shows every sender of the window gaining its tools', async () => {
    const operations = (await one<{ id: number }>("SELECT id FROM toolkits WHERE name = 'Operations'")).id;
    const impact = await preview({ attach: { agent_id: ids.sundae, toolkit_id: operations } });
    expect(impact.senders.gaining.map((g: { routing_key: string; tools: string[] }) => [g.routing_key, g.tools])).toEqual([
      ['jane@acme.com', ['send_email']],
      ['mara@thescoop.com', ['send_email']],
    ]);
    expect(impact.runs_examined).toBe(4);
    expect(impact.calls_examined).toBe(4);
  });

  test('then the answer says the window it read, and a window of a second holds none of the traffic', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const body = (
      await t
        .admin()
        .post('/api/policy/preview')
        .send({ change: { update: { attachment_id: ids.sundaeFinance, rules: [] } }, window: '1s' })
        .expect(200)
    ).body;
    expect(new Date(body.window.to).getTime() - new Date(body.window.from).getTime()).toBe(1000);
    expect(body.calls_examined).toBe(0);
    expect(body.calls.changed).toEqual([]);
  });

  test('then previews leave every table and every policy version as they were', async () => {
    const state = async () => {
      const counts: Record<string, number> = {};
      for (const { name } of TOOLGATE_TABLES) counts[name] = Number((await one<{ n: string }>(`SELECT count(*) AS n FROM ${name}`)).n);
      const versions = await t.sequelize.query('SELECT id, toolgate_policy_version(id) AS version FROM agents ORDER BY id', {
        type: QueryTypes.SELECT,
      });
      return { counts, versions };
    };
    const before = await state();
    await preview({ update: { attachment_id: ids.sundaeFinance, rules: [], caps: [{ per: 'agent', limit: 1, window: '1h' }] } });
    await preview({ toolkit: { toolkit_id: ids.finance, member_tool_ids: ['process_refund', 'send_email'] } });
    await preview({ access_rules: { agent_id: ids.scout, rules: [] } });
    await preview({ detach: { attachment_id: ids.scoutOperations } });
    expect(await state()).toEqual(before);
    // And the live policy is as it was: Jane is still refused the refund.
    const view = await t.admin().get(`/api/agents/${ids.sundae}/tools`).query({ sender: 'jane@acme.com' }).expect(200);
    expect(view.body.tools).not.toContain('process_refund');
  });
});

describe('when instances listen for policy changes while an operator previews', () => {
  test('then a preview notifies nothing, and the change made for real does', async () => {
    const listener = new Client({ connectionString: t.databaseUrl });
    await listener.connect();
    const told: string[] = [];
    listener.on('notification', (n) => told.push(n.channel));
    await listener.query('LISTEN toolgate_policy');
    try {
      await preview({ update: { attachment_id: ids.scoutOperations, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] } });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(told).toEqual([]);
      await t.admin().patch(`/api/agents/${ids.scout}/toolkits/${ids.scoutOperations}`).send({ allow_proactive: true }).expect(200);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(told).toContain('toolgate_policy');
    } finally {
      await listener.end();
    }
  });
});

describe('when a preview names what cannot be previewed', () => {
  test('then two changes at once are a 422 saying to give one', async () => {
    const res = await t
      .admin()
      .post('/api/policy/preview')
      .send({ change: { detach: { attachment_id: ids.sundaeFinance }, access_rules: { agent_id: ids.sundae, rules: [] } } })
      .expect(422);
    expect(res.body.code).toBe('validation_error');
  });

  test('then an attachment that does not exist is a 404', async () => {
    const res = await t
      .admin()
      .post('/api/policy/preview')
      .send({ change: { detach: { attachment_id: 999999 } } })
      .expect(404);
    expect(res.body.code).toBe('not_found');
  });

  test('then attaching a toolkit the agent holds already is a 409', async () => {
    const res = await t
      .admin()
      .post('/api/policy/preview')
      .send({ change: { attach: { agent_id: ids.sundae, toolkit_id: ids.finance } } })
      .expect(409);
    expect(res.body.code).toBe('conflict');
  });

  test('then a member that is no registered tool is a 422 naming the one meant', async () => {
    const res = await t
      .admin()
      .post('/api/policy/preview')
      .send({ change: { toolkit: { toolkit_id: ids.finance, member_tool_ids: ['process_refnd'] } } })
      .expect(422);
    expect(JSON.stringify(res.body.detail)).toContain('process_refund');
  });

  test('then a window past a year is a 422', async () => {
    const res = await t
      .admin()
      .post('/api/policy/preview')
      .send({ change: { detach: { attachment_id: ids.sundaeFinance } }, window: '400d' })
      .expect(422);
    expect(res.body.code).toBe('validation_error');
  });

  test('then a client token is refused', async () => {
    await t
      .client()
      .post('/api/policy/preview')
      .send({ change: { detach: { attachment_id: ids.sundaeFinance } } })
      .expect(403);
  });
});
