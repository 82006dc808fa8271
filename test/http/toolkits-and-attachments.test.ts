// Operators' CRUD over toolkits, agents, attachments and rules: conflicts, unknown ids, stale
// members, cascades, and the explain view's reasons.
import { QueryTypes } from 'sequelize';
import { createTestApp, type TestApp } from '../support/app';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(() => t.close());

const newToolkit = async (name: string, member_tool_ids: string[] = ['lookup_order']) =>
  (await t.admin().post('/api/toolkits').send({ name, member_tool_ids }).expect(201)).body;
const newAgent = async (name = 'Agent') => (await t.admin().post('/api/agents').send({ name, toolkit_ids: [] }).expect(201)).body;

describe('when an operator creates toolkits', () => {
  test('then the toolkit comes back in the HTTP.md shape', async () => {
    const kit = await newToolkit('Support', ['lookup_order', 'check_flavor_stock']);
    expect(kit).toEqual({
      id: expect.any(Number),
      name: 'Support',
      description: '',
      member_tool_ids: ['lookup_order', 'check_flavor_stock'],
      stale_tool_ids: [],
      system_key: null,
    });
  });

  test('then a name that differs only in case is a 409 conflict', async () => {
    const res = await t.admin().post('/api/toolkits').send({ name: 'SUPPORT', member_tool_ids: [] }).expect(409);
    expect(res.body.detail).toMatch(/regardless of case/);
  });

  test('then an unregistered member is a 422 naming the id it most likely meant', async () => {
    const res = await t
      .admin()
      .post('/api/toolkits')
      .send({ name: 'Typo', member_tool_ids: ['lookup_order', 'Email-Analyzer'] })
      .expect(422);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'member_tool_ids', 1], type: 'unknown_tool' })]);
    expect(res.body.detail[0].msg).toMatch(/did you mean "email_analyzer"/);
  });

  test('then a blank name is a 422', async () => {
    await t.admin().post('/api/toolkits').send({ name: '   ', member_tool_ids: [] }).expect(422);
  });

  test('then PATCH renames and DELETE removes, and a missing toolkit is a 404', async () => {
    const kit = await newToolkit('Temp');
    expect((await t.admin().patch(`/api/toolkits/${kit.id}`).send({ name: 'Temporary', description: 'x' }).expect(200)).body).toMatchObject(
      { name: 'Temporary', description: 'x' },
    );
    await t.admin().delete(`/api/toolkits/${kit.id}`).expect(204);
    expect((await t.admin().get(`/api/toolkits/${kit.id}`).expect(404)).body.code).toBe('not_found');
  });
});

describe('when a member is no longer registered', () => {
  test('then it is kept, reported stale, and never granted', async () => {
    const kit = await newToolkit('Legacy things', ['lookup_order']);
    await t.sequelize.query("UPDATE toolkits SET member_tool_ids = ARRAY['lookup_order','fax_sender']::varchar(64)[] WHERE id = :id", {
      replacements: { id: kit.id },
    });
    expect((await t.admin().get(`/api/toolkits/${kit.id}`).expect(200)).body.stale_tool_ids).toEqual(['fax_sender']);
    const agent = await newAgent();
    await t.admin().post(`/api/agents/${agent.id}/toolkits`).send({ toolkit_id: kit.id }).expect(201);
    const view = (await t.admin().get(`/api/agents/${agent.id}/tools`).query({ sender: 'a@b.com' }).expect(200)).body;
    expect(view.tools).toEqual(['lookup_order']);
    expect(view.attachments[0].stale_tool_ids).toEqual(['fax_sender']);
    const res = await t.client().post(`/api/agents/${agent.id}/tool-calls`).send({ tool: 'fax_sender', sender: 'a@b.com' }).expect(403);
    expect(res.body.code).toBe('tool_forbidden');
  });

  test('then a PATCH may keep the stale member but not add a new unknown one', async () => {
    const [kit] = await t.sequelize.query<{ id: number }>("SELECT id FROM toolkits WHERE name = 'Legacy things'", {
      type: QueryTypes.SELECT,
    });
    await t
      .admin()
      .patch(`/api/toolkits/${kit.id}`)
      .send({ member_tool_ids: ['fax_sender'] })
      .expect(200);
    await t
      .admin()
      .patch(`/api/toolkits/${kit.id}`)
      .send({ member_tool_ids: ['fax_sender', 'telex'] })
      .expect(422);
  });
});

describe('when an operator updates an agent', () => {
  test('then PATCH answers 204 and GET reads the change back', async () => {
    const agent = await newAgent('Before');
    await t.admin().patch(`/api/agents/${agent.id}`).send({ name: 'After', system_prompt: 'Be brief.' }).expect(204);
    const res = await t.admin().get(`/api/agents/${agent.id}`).expect(200);
    expect(res.body).toMatchObject({ id: agent.id, name: 'After', system_prompt: 'Be brief.', description: null, enabled_tools: null });
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(agent.updated_at));
  });

  test('then an unknown agent is a 404 and a bad field a 422', async () => {
    await t.admin().patch('/api/agents/987654').send({ name: 'x' }).expect(404);
    const agent = await newAgent();
    await t.admin().patch(`/api/agents/${agent.id}`).send({ name: '' }).expect(422);
    await t
      .admin()
      .patch(`/api/agents/${agent.id}`)
      .send({ toolkit_ids: [1] })
      .expect(422);
  });
});

describe('when an operator attaches toolkits', () => {
  test('then attaching the same toolkit twice is a 409', async () => {
    const kit = await newToolkit('Twice');
    const agent = await newAgent();
    await t.admin().post(`/api/agents/${agent.id}/toolkits`).send({ toolkit_id: kit.id }).expect(201);
    expect((await t.admin().post(`/api/agents/${agent.id}/toolkits`).send({ toolkit_id: kit.id }).expect(409)).body.code).toBe('conflict');
  });

  test('then an unknown agent or toolkit is a 404', async () => {
    const kit = await newToolkit('Lonely');
    await t.admin().post('/api/agents/424242/toolkits').send({ toolkit_id: kit.id }).expect(404);
    const agent = await newAgent();
    await t.admin().post(`/api/agents/${agent.id}/toolkits`).send({ toolkit_id: 424242 }).expect(404);
  });

  test('then the attachment shape holds the toolkit, terms and rules', async () => {
    const kit = await newToolkit('Shaped');
    const agent = await newAgent();
    const res = await t
      .admin()
      .post(`/api/agents/${agent.id}/toolkits`)
      .send({
        toolkit_id: kit.id,
        allow_proactive: true,
        rules: [
          { kind: 'deny', pattern: 'spam@x.com' },
          { kind: 'deny', pattern: 'SPAM@x.com' },
        ],
      })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      agent_id: agent.id,
      toolkit: expect.objectContaining({ id: kit.id, name: 'Shaped' }),
      allow_proactive: true,
      rules: [{ id: expect.any(Number), kind: 'deny', pattern: 'spam@x.com' }],
      approval: null,
      caps: [],
    });
  });

  test('then PATCH rules replaces the whole list, and a rule can be deleted alone', async () => {
    const kit = await newToolkit('Replaced');
    const agent = await newAgent();
    const att = (
      await t
        .admin()
        .post(`/api/agents/${agent.id}/toolkits`)
        .send({ toolkit_id: kit.id, rules: [{ kind: 'allow', pattern: 'a@x.com' }] })
        .expect(201)
    ).body;
    const patched = (
      await t
        .admin()
        .patch(`/api/agents/${agent.id}/toolkits/${att.id}`)
        .send({
          rules: [
            { kind: 'allow', pattern: 'b@x.com' },
            { kind: 'deny', pattern: '*@y.com' },
          ],
        })
        .expect(200)
    ).body;
    expect(patched.rules.map((r: { pattern: string }) => r.pattern)).toEqual(['b@x.com', '*@y.com']);
    await t.admin().delete(`/api/agents/${agent.id}/toolkits/${att.id}/rules/${patched.rules[0].id}`).expect(204);
    await t.admin().delete(`/api/agents/${agent.id}/toolkits/${att.id}/rules/${patched.rules[0].id}`).expect(404);
    expect((await t.admin().get(`/api/agents/${agent.id}/toolkits/${att.id}`).expect(200)).body.rules).toEqual([
      { id: expect.any(Number), kind: 'deny', pattern: '*@y.com' },
    ]);
  });

  test("then another agent's attachment id in the path is a 404", async () => {
    const kit = await newToolkit('Mine');
    const a = await newAgent();
    const b = await newAgent();
    const att = (await t.admin().post(`/api/agents/${a.id}/toolkits`).send({ toolkit_id: kit.id }).expect(201)).body;
    await t.admin().delete(`/api/agents/${b.id}/toolkits/${att.id}`).expect(404);
    await t.admin().get(`/api/agents/${a.id}/toolkits/${att.id}`).expect(200);
  });
});

describe('when grants change', () => {
  test('then detaching revokes the tools for the next run', async () => {
    const kit = await newToolkit('Revocable', ['process_refund']);
    const agent = await newAgent();
    const att = (await t.admin().post(`/api/agents/${agent.id}/toolkits`).send({ toolkit_id: kit.id }).expect(201)).body;
    await t
      .client()
      .post(`/api/agents/${agent.id}/tool-calls`)
      .send({ tool: 'process_refund', input: { order_id: 'SCP-1050' }, sender: 'a@b.com' })
      .expect(200);
    await t.admin().delete(`/api/agents/${agent.id}/toolkits/${att.id}`).expect(204);
    await t
      .client()
      .post(`/api/agents/${agent.id}/tool-calls`)
      .send({ tool: 'process_refund', input: { order_id: 'SCP-1050' }, sender: 'a@b.com' })
      .expect(403);
  });

  test('then deleting a toolkit removes its attachments and rules', async () => {
    const kit = await newToolkit('Doomed');
    const agent = await newAgent();
    await t
      .admin()
      .post(`/api/agents/${agent.id}/toolkits`)
      .send({ toolkit_id: kit.id, rules: [{ kind: 'allow', pattern: '*@x.com' }] })
      .expect(201);
    await t.admin().delete(`/api/toolkits/${kit.id}`).expect(204);
    expect((await t.admin().get(`/api/agents/${agent.id}/toolkits`).expect(200)).body).toEqual([]);
  });

  test('then deleting an agent removes its attachments, rules and tool calls', async () => {
    const kit = await newToolkit('Kept');
    const agent = await newAgent();
    await t
      .admin()
      .post(`/api/agents/${agent.id}/toolkits`)
      .send({ toolkit_id: kit.id, rules: [{ kind: 'allow', pattern: '*@x.com' }] })
      .expect(201);
    await t
      .client()
      .post(`/api/agents/${agent.id}/tool-calls`)
      .send({ tool: 'lookup_order', input: { order_id: 'SCP-1050' }, sender: 'z@z.com' })
      .expect(403);
    await t.admin().delete(`/api/agents/${agent.id}`).expect(204);
    const [counts] = await t.sequelize.query<{ a: string; r: string; c: string }>(
      `SELECT (SELECT count(*) FROM agent_toolkits WHERE agent_id = :id) a,
              (SELECT count(*) FROM agent_toolkit_rules r JOIN agent_toolkits at ON at.id = r.agent_toolkit_id WHERE at.agent_id = :id) r,
              (SELECT count(*) FROM tool_calls WHERE agent_id = :id) c`,
      { replacements: { id: agent.id }, type: QueryTypes.SELECT },
    );
    expect(counts).toEqual({ a: '0', r: '0', c: '0' });
    await t.admin().get(`/api/toolkits/${kit.id}`).expect(200);
    await t.admin().get(`/api/agents/${agent.id}`).expect(404);
  });
});

describe('when the explain view is asked', () => {
  test('then the catalogue lists every attached tool with gates ignored', async () => {
    const kit = await newToolkit('Gated catalogue', ['process_refund']);
    const agent = await newAgent();
    await t
      .admin()
      .post(`/api/agents/${agent.id}/toolkits`)
      .send({ toolkit_id: kit.id, rules: [{ kind: 'allow', pattern: 'boss@x.com' }] })
      .expect(201);
    const res = await t.admin().get(`/api/agents/${agent.id}/tools`).expect(200);
    expect(res.body).toMatchObject({ run: 'catalogue', routing_key: null, tools: ['process_refund'] });
    expect(res.body.attachments[0]).toMatchObject({ admitted: true, reason: 'catalogue' });
  });

  test('then a sender with no routing key is reported as such', async () => {
    const [kit] = await t.sequelize.query<{ id: number }>("SELECT id FROM toolkits WHERE name = 'Gated catalogue'", {
      type: QueryTypes.SELECT,
    });
    const [row] = await t.sequelize.query<{ agent_id: number }>('SELECT agent_id FROM agent_toolkits WHERE toolkit_id = :id', {
      replacements: { id: kit.id },
      type: QueryTypes.SELECT,
    });
    const res = await t.admin().get(`/api/agents/${row.agent_id}/tools`).query({ sender: 'a@b.com, c@d.com' }).expect(200);
    expect(res.body).toMatchObject({ run: 'sender', routing_key: null, tools: [] });
    expect(res.body.attachments[0]).toMatchObject({ admitted: false, reason: 'no_routing_key' });
  });

  test('then asking for a sender and a scheduled run at once is a 422', async () => {
    const agent = await newAgent();
    await t.admin().get(`/api/agents/${agent.id}/tools`).query({ sender: 'a@b.com', scheduled: 'true' }).expect(422);
  });
});
