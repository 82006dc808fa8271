// The system toolkits: the sync is idempotent and safe when run concurrently; All Tools mirrors
// the manifest; Default Tools keeps its curated members and reports stale ones; neither can be
// deleted, not even with SQL; new agents get Default Tools.
import { QueryTypes } from 'sequelize';
import { createToolgate } from '../../src/toolgate';
import { SCOOP_TOOLS } from '../../src/app/demo/scoop-tools';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ sync: false });
});

afterAll(() => t.close());

const systemRows = () =>
  t.sequelize.query<{ system_key: string; member_tool_ids: string[] }>(
    'SELECT system_key, member_tool_ids FROM toolkits WHERE system_key IS NOT NULL ORDER BY system_key',
    {
      type: QueryTypes.SELECT,
    },
  );

describe('when no sync has run yet', () => {
  test('then a new agent gets no toolkits, and so no tools', async () => {
    const agent = await makeAgent(t, { name: 'Early' });
    expect((await t.admin().get(`/api/agents/${agent}/toolkits`).expect(200)).body).toEqual([]);
    expect((await t.admin().get(`/api/agents/${agent}/tools`).query({ sender: 'a@b.com' }).expect(200)).body.tools).toEqual([]);
  });
});

describe('when the sync runs', () => {
  test('then eight concurrent first syncs create exactly one All Tools and one Default Tools', async () => {
    const reports = await Promise.all(Array.from({ length: 8 }, () => t.tg.syncSystemToolkits()));
    const rows = await systemRows();
    expect(rows.map((r) => r.system_key)).toEqual(['all_tools', 'default_tools']);
    expect(reports.flatMap((r) => r.created).sort()).toEqual(['all_tools', 'default_tools']);
    expect(new Set(reports.map((r) => r.all_tools.id)).size).toBe(1);
  });

  test('then All Tools holds every registered tool and Default Tools the builtins only', async () => {
    const res = await t.admin().post('/api/toolkits/sync').expect(200);
    expect(res.body.all_tools.member_tool_ids).toEqual(t.tg.tools.map((x) => x.id));
    expect(res.body.default_tools.member_tool_ids).toEqual(['email_analyzer', 'document_search', 'task_creator', 'reply_generator']);
    expect(res.body.all_tools.system_key).toBe('all_tools');
  });

  test('then a second sync changes nothing', async () => {
    const before = await t.sequelize.query('SELECT id, name, member_tool_ids, updated_at FROM toolkits ORDER BY id', {
      type: QueryTypes.SELECT,
    });
    const report = (await t.admin().post('/api/toolkits/sync').expect(200)).body;
    const after = await t.sequelize.query('SELECT id, name, member_tool_ids, updated_at FROM toolkits ORDER BY id', {
      type: QueryTypes.SELECT,
    });
    expect(after).toEqual(before);
    expect(report).toMatchObject({ created: [], all_tools_added: [], all_tools_removed: [] });
  });

  test("then an operator's curation of Default Tools survives the sync", async () => {
    const defaults = (await t.admin().get('/api/toolkits').expect(200)).body.find(
      (k: { system_key: string }) => k.system_key === 'default_tools',
    );
    await t
      .admin()
      .patch(`/api/toolkits/${defaults.id}`)
      .send({ member_tool_ids: ['email_analyzer', 'lookup_order'] })
      .expect(200);
    const report = (await t.admin().post('/api/toolkits/sync').expect(200)).body;
    expect(report.default_tools.member_tool_ids).toEqual(['email_analyzer', 'lookup_order']);
  });

  test('then a tool whose registration was removed is dropped from All Tools, and kept but reported stale in Default Tools', async () => {
    // The same database, served by a deploy whose code no longer registers lookup_order.
    const fewer = createToolgate({ sequelize: t.sequelize, tools: SCOOP_TOOLS.filter((tool) => tool.id !== 'lookup_order') });
    const report = await fewer.syncSystemToolkits();
    expect(report.all_tools_removed).toEqual(['lookup_order']);
    expect(report.all_tools.member_tool_ids).not.toContain('lookup_order');
    expect(report.default_tools.member_tool_ids).toEqual(['email_analyzer', 'lookup_order']);
    expect(report.stale_skipped).toEqual(['lookup_order']);
    // And back: the full manifest's sync restores it to All Tools.
    const again = await t.tg.syncSystemToolkits();
    expect(again.all_tools_added).toEqual(['lookup_order']);
    expect(again.stale_skipped).toEqual([]);
  });

  test('then All Tools members cannot be edited by hand', async () => {
    const all = (await t.admin().get('/api/toolkits').expect(200)).body.find((k: { system_key: string }) => k.system_key === 'all_tools');
    const res = await t
      .admin()
      .patch(`/api/toolkits/${all.id}`)
      .send({ member_tool_ids: ['email_analyzer'] })
      .expect(409);
    expect(res.body.code).toBe('conflict');
  });
});

describe('when someone deletes a system toolkit', () => {
  test('then the API answers 409 and both remain', async () => {
    const kits = (await t.admin().get('/api/toolkits').expect(200)).body.filter((k: { system_key: string | null }) => k.system_key);
    for (const kit of kits) {
      const res = await t.admin().delete(`/api/toolkits/${kit.id}`).expect(409);
      expect(res.body.detail).toMatch(/system toolkit/);
    }
    expect((await systemRows()).length).toBe(2);
  });

  test('then the database itself refuses a DELETE in SQL', async () => {
    await expect(t.sequelize.query("DELETE FROM toolkits WHERE system_key = 'all_tools'")).rejects.toThrow(/cannot be deleted/);
    expect((await systemRows()).length).toBe(2);
  });
});

describe('when an agent is created after the sync', () => {
  test('then it gets Default Tools with an open gate', async () => {
    const agent = await makeAgent(t, { name: 'Fresh' });
    const attachments = (await t.admin().get(`/api/agents/${agent}/toolkits`).expect(200)).body;
    expect(attachments).toEqual([
      expect.objectContaining({ allow_proactive: false, rules: [], toolkit: expect.objectContaining({ system_key: 'default_tools' }) }),
    ]);
  });

  test('then naming its toolkits replaces Default Tools', async () => {
    const kit = await makeToolkit(t, 'Only this', ['lookup_order']);
    const agent = await makeAgent(t, { name: 'Named', toolkit_ids: [kit] });
    const attachments = (await t.admin().get(`/api/agents/${agent}/toolkits`).expect(200)).body;
    expect(attachments.map((a: { toolkit: { id: number } }) => a.toolkit.id)).toEqual([kit]);
  });

  test('then an empty legacy enabled_tools string grants nothing', async () => {
    const agent = await makeAgent(t, { name: 'Chat only', enabled_tools: '' });
    expect((await t.admin().get(`/api/agents/${agent}/toolkits`).expect(200)).body).toEqual([]);
  });
});
