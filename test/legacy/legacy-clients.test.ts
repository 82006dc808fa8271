// Legacy clients keep working: POST /api/agents and PATCH /api/agents/:id with an enabled_tools
// string go through the migration's planner for that one agent, and the two paths agree.
import { migrateEnabledTools } from '../../src/legacy/migrate-enabled-tools';
import { createTestApp, type TestApp } from '../support/app';
import { insertLegacyAgents } from './fixtures/legacy-database';
import { internalsOf } from '../../src/toolgate';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const grants = async (agentId: number) =>
  ((await t.admin().get(`/api/agents/${agentId}/toolkits`).expect(200)).body as { toolkit: { id: number; name: string } }[]).map(
    (a) => a.toolkit.name,
  );
const tools = async (agentId: number) =>
  (await t.admin().get(`/api/agents/${agentId}/tools`).query({ sender: 'jane@acme.com' }).expect(200)).body.tools;

describe('when a legacy client creates an agent with an enabled_tools string', () => {
  test('then it gets the toolkit the bulk migration made for the same set, not Default Tools', async () => {
    const [bulk] = await insertLegacyAgents(t.sequelize, [{ name: 'Migrated', enabled_tools: 'task_creator,email_analyzer' }]);
    await migrateEnabledTools(t.sequelize, internalsOf(t.tg).registry.manifest, { mode: 'apply' });
    const created = (
      await t.admin().post('/api/agents').send({ name: 'Posted', enabled_tools: ' email_analyzer, task_creator,' }).expect(201)
    ).body;
    expect(created.enabled_tools_report).toEqual({
      tool_ids: ['email_analyzer', 'task_creator'],
      unmatched: [],
      toolkit_id: expect.any(Number),
    });
    expect(await grants(created.id)).toEqual(['Legacy: email_analyzer, task_creator']);
    const bulkKit = (await t.admin().get(`/api/agents/${bulk}/toolkits`).expect(200)).body[0].toolkit.id;
    expect(created.enabled_tools_report.toolkit_id).toBe(bulkKit);
  });

  test('then a token that is not an exact id grants nothing and comes back with its suggestion', async () => {
    const created = (await t.admin().post('/api/agents').send({ name: 'Typo', enabled_tools: 'Document-Search' }).expect(201)).body;
    expect(created.enabled_tools_report).toEqual({
      tool_ids: [],
      unmatched: [{ token: 'Document-Search', suggestion: 'document_search' }],
      toolkit_id: null,
    });
    expect(await tools(created.id)).toEqual([]);
  });

  test("then a set whose plain name an operator's toolkit holds gets a numbered name, and the operator's toolkit is untouched", async () => {
    const operator = (
      await t
        .admin()
        .post('/api/toolkits')
        .send({ name: 'LEGACY: reply_generator', member_tool_ids: ['process_refund'] })
        .expect(201)
    ).body;
    const created = (await t.admin().post('/api/agents').send({ name: 'Replier', enabled_tools: 'reply_generator' }).expect(201)).body;
    expect(await grants(created.id)).toEqual(['Legacy: reply_generator (2)']);
    expect(await tools(created.id)).toEqual(['reply_generator']);
    expect((await t.admin().get(`/api/toolkits/${operator.id}`).expect(200)).body).toMatchObject({
      name: 'LEGACY: reply_generator',
      member_tool_ids: ['process_refund'],
    });
  });
});

describe("when the toolkit for the string's set has had its members edited", () => {
  test('then creating the agent is a 409 that says so, and no agent is made', async () => {
    const first = (await t.admin().post('/api/agents').send({ name: 'Searcher', enabled_tools: 'document_search' }).expect(201)).body;
    await t
      .admin()
      .patch(`/api/toolkits/${first.enabled_tools_report.toolkit_id}`)
      .send({ member_tool_ids: ['document_search', 'process_refund'] })
      .expect(200);
    const refused = (await t.admin().post('/api/agents').send({ name: 'Second searcher', enabled_tools: 'document_search' }).expect(409))
      .body;
    expect(refused).toMatchObject({ code: 'conflict', detail: expect.stringContaining('has had its members edited') });
    const names = ((await t.admin().get('/api/agents').expect(200)).body as { name: string }[]).map((a) => a.name);
    expect(names).not.toContain('Second searcher');
    await t
      .admin()
      .patch(`/api/toolkits/${first.enabled_tools_report.toolkit_id}`)
      .send({ member_tool_ids: ['document_search'] })
      .expect(200);
  });
});

describe("when a legacy client updates an agent's enabled_tools", () => {
  test("then its legacy grant follows the new string and the operator's grants stay", async () => {
    const finance = await makeToolkit(t, 'Finance', ['process_refund']);
    const agent = await makeAgent(t, { name: 'Mixed', enabled_tools: 'email_analyzer', toolkit_ids: [finance] });
    await t.admin().patch(`/api/agents/${agent}`).send({ enabled_tools: 'document_search,email_analyzer' }).expect(204);
    expect((await grants(agent)).sort()).toEqual(['Finance', 'Legacy: document_search, email_analyzer']);
    await t.admin().patch(`/api/agents/${agent}`).send({ enabled_tools: null }).expect(204);
    expect(await grants(agent)).toEqual(['Finance']);
  });

  test('then re-sending the same string keeps a grant the admin mapped from typos', async () => {
    const [agent] = await insertLegacyAgents(t.sequelize, [{ name: 'Mapped', enabled_tools: 'Email_Analyzer' }]);
    await migrateEnabledTools(t.sequelize, internalsOf(t.tg).registry.manifest, { mode: 'apply', mapTypos: true });
    expect(await tools(agent!)).toEqual(['email_analyzer']);
    await t.admin().patch(`/api/agents/${agent}`).send({ name: 'Mapped', enabled_tools: 'Email_Analyzer' }).expect(204);
    expect(await tools(agent!)).toEqual(['email_analyzer']);
    await t.admin().patch(`/api/agents/${agent}`).send({ enabled_tools: 'Email_Analyzer,task_creator' }).expect(204);
    expect(await tools(agent!)).toEqual(['task_creator']);
  });
});

describe('when agents were written by both paths', () => {
  test('then a bulk apply afterwards finds nothing to change', async () => {
    const again = await migrateEnabledTools(t.sequelize, internalsOf(t.tg).registry.manifest, { mode: 'apply' });
    expect(again.agents).toMatchObject({ follow: 6, changed: 0 });
    expect(again.changes).toEqual({ toolkits_created: 0, toolkits_removed: 0, attachments_created: 0, attachments_removed: 0 });
    expect(again.verification.status).toBe('passed');
  });
});
