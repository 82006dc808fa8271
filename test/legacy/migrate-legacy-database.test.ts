// The whole story on a database the legacy application made: the schema migrations adopt it, the
// enabled_tools migration previews, applies with parity, changes nothing the second time, picks up
// agents added later, and undoes exactly its own work; the schema migrations then revert to the
// legacy schema, rows and all.
import type { Express } from 'express';
import { QueryTypes, type Sequelize } from 'sequelize';
import request from 'supertest';
import { migrationsRoutes } from '../../routes/migrations';
import { mountRoutes } from '../../routes/route';
import { createApp } from '../../src/app/app';
import { legacyHasTool } from '../../src/core/legacy-enabled-tools';
import { migrateDown, migrateUp } from '../../src/db/migrate';
import { migrateEnabledTools } from '../../src/legacy/migrate-enabled-tools';
import type { MigrationReport } from '../../src/legacy/report';
import { undoEnabledTools } from '../../src/legacy/undo-enabled-tools';
import { createLogger } from '../../src/app/logger';
import { createToolgate, type Toolgate, internalsOf } from '../../src/toolgate';
import { createEmptyDatabase, type TestDatabase } from '../support/database';
import { buildLegacyDatabase, insertLegacyAgents, LEGACY_AGENTS, OPERATOR_MANAGED_AGENT } from './fixtures/legacy-database';
import { fingerprint, legacySnapshot } from './support/snapshots';

const ADMIN = 'admin-token-0123456789abcdef';
const TOOLS = ['document_search', 'email_analyzer', 'reply_generator', 'task_creator'];

let db: TestDatabase;
let sql: Sequelize;
let tg: Toolgate;
let app: Express;
let legacyBefore: Awaited<ReturnType<typeof legacySnapshot>>;

beforeAll(async () => {
  db = await createEmptyDatabase();
  sql = db.sequelize;
  await buildLegacyDatabase(sql);
  legacyBefore = await legacySnapshot(sql, { legacyOnly: true });
  await migrateUp(sql, { adoptLegacyTables: true });
  tg = createToolgate({ sequelize: sql, adminToken: ADMIN });
  await tg.syncSystemToolkits();
  app = createApp(tg, { logger: createLogger(false), extraApiRoutes: [mountRoutes(migrationsRoutes, internalsOf(tg), internalsOf(tg))] });
});
afterAll(async () => {
  await tg.close();
  await db.drop();
});

const admin = {
  get: (url: string) => request(app).get(url).set('Authorization', `Bearer ${ADMIN}`),
  post: (url: string) => request(app).post(url).set('Authorization', `Bearer ${ADMIN}`),
};

async function allAgents(): Promise<{ id: number; enabled_tools: string | null }[]> {
  return sql.query('SELECT id, enabled_tools FROM agents ORDER BY id', { type: QueryTypes.SELECT });
}

/** The resolution route's answer for a sender run: with a routing key, and with a sender that has none. */
async function offered(agentId: number, sender: string): Promise<string[]> {
  const res = await admin.get(`/api/agents/${agentId}/tools`).query({ sender }).expect(200);
  return res.body.tools;
}

describe('when the schema migrations run on a legacy database', () => {
  test("then the legacy columns and rows are unchanged and only missing columns are added, marked as toolgate's", async () => {
    expect(await legacySnapshot(sql, { legacyOnly: true })).toEqual(legacyBefore);
    const added = await sql.query<{ table_name: string; column_name: string }>(
      `SELECT c.table_name, c.column_name FROM information_schema.columns c
        WHERE c.table_schema = current_schema() AND c.table_name IN ('agents', 'tool_calls')
          AND col_description(to_regclass(c.table_name)::oid, c.ordinal_position) = 'added by toolgate'
        ORDER BY 1, 2`,
      { type: QueryTypes.SELECT },
    );
    expect(added).toEqual([
      { table_name: 'agents', column_name: 'description' },
      { table_name: 'agents', column_name: 'escalation_address' },
      { table_name: 'agents', column_name: 'updated_at' },
      { table_name: 'tool_calls', column_name: 'approval_request_id' },
      { table_name: 'tool_calls', column_name: 'approved_by' },
      { table_name: 'tool_calls', column_name: 'deadline_at' },
      { table_name: 'tool_calls', column_name: 'dispatch' },
      { table_name: 'tool_calls', column_name: 'duration_ms' },
      { table_name: 'tool_calls', column_name: 'error' },
      { table_name: 'tool_calls', column_name: 'instance_id' },
      { table_name: 'tool_calls', column_name: 'policy_version' },
      { table_name: 'tool_calls', column_name: 'reason' },
      { table_name: 'tool_calls', column_name: 'routing_key' },
      { table_name: 'tool_calls', column_name: 'run' },
      { table_name: 'tool_calls', column_name: 'run_key' },
      { table_name: 'tool_calls', column_name: 'shadow' },
      { table_name: 'tool_calls', column_name: 'tool_id' },
    ]);
  });

  test('then no legacy agent has any tool until the data migration runs (fail closed)', async () => {
    expect(await offered(1, 'jane@acme.com')).toEqual([]);
  });
});

describe('when an admin previews, applies and re-applies the enabled_tools migration', () => {
  let operatorKit: number;
  let supportKit: number;
  let dryRun: MigrationReport;
  let applied: MigrationReport;

  beforeAll(async () => {
    // An operator's toolkit already holds the name the migration would give the {email_analyzer} set,
    // and one agent was put under an operator's own grant before the migration.
    operatorKit = (
      await admin
        .post('/api/toolkits')
        .send({ name: 'Legacy: email_analyzer', member_tool_ids: ['document_search'] })
        .expect(201)
    ).body.id;
    supportKit = (
      await admin
        .post('/api/toolkits')
        .send({ name: 'Support', member_tool_ids: ['email_analyzer', 'reply_generator'] })
        .expect(201)
    ).body.id;
    await admin.post(`/api/agents/${OPERATOR_MANAGED_AGENT}/toolkits`).send({ toolkit_id: supportKit }).expect(201);
  });

  test('then the dry run changes nothing', async () => {
    const before = await fingerprint(sql);
    dryRun = (await admin.post('/api/migrations/enabled-tools').send({}).expect(200)).body;
    expect(dryRun).toMatchObject({ mode: 'dry_run', committed: false, changes: { toolkits_created: 0, attachments_created: 0 } });
    expect(await fingerprint(sql)).toEqual(before);
  });

  test('then the report groups agents by their set of valid ids and lists every token that granted nothing', () => {
    expect(dryRun.agents).toEqual({
      read: 18,
      follow: 17,
      changed: 12,
      unchanged: 5,
      without_tools: 5,
      skipped: 1,
      with_unmatched_tokens: 7,
      with_mapped_typos: 0,
    });
    expect(dryRun.toolkits.map((t) => [t.name, t.agents, t.status])).toEqual([
      ['Legacy: email_analyzer, task_creator', 5, 'create'],
      ['Legacy: email_analyzer (2)', 2, 'create'],
      ['Legacy: document_search', 1, 'create'],
      ['Legacy: document_search, email_analyzer', 1, 'create'],
      ['Legacy: document_search, email_analyzer, reply_generator, task_creator', 1, 'create'],
      ['Legacy: reply_generator', 1, 'create'],
      ['Legacy: task_creator', 1, 'create'],
    ]);
    expect(dryRun.toolkits[1]!.note).toMatch(/already holds the name "Legacy: email_analyzer"/);
    expect(dryRun.unmatched.map((u) => [u.agent_id, u.token.slice(0, 20), u.suggestion])).toEqual([
      [6, 'Email_Analyzer', 'email_analyzer'],
      [7, 'email-analyzer', 'email_analyzer'],
      [8, 'calendar_sync', null],
      [9, 'document_serach', 'document_search'],
      [13, 'x'.repeat(20), null],
      [14, '\ufefftask_creator', 'task_creator'],
      [16, 'email_analyzer;task_', null],
    ]);
    expect(dryRun.unmatched.find((u) => u.agent_id === 13)!.token).toBe(`${'x'.repeat(120)}… (3000 characters)`);
    expect(dryRun.skipped).toEqual([
      {
        agent_id: OPERATOR_MANAGED_AGENT,
        agent_name: 'Operator managed',
        reason: 'operator_attachments',
        detail: 'holds grants the migration did not make: Support [operator]',
      },
    ]);
    expect(dryRun.verification).toMatchObject({ status: 'passed', over: 'plan', agents_checked: 17, tools: TOOLS, mismatch_count: 0 });
  });

  test('then the apply commits one toolkit per set, attached with no rules, and verifies parity inside its transaction', async () => {
    applied = (await admin.post('/api/migrations/enabled-tools').send({ dry_run: false }).expect(200)).body;
    expect(applied).toMatchObject({
      mode: 'apply',
      committed: true,
      changes: { toolkits_created: 7, attachments_created: 12, attachments_removed: 0 },
      verification: { status: 'passed', over: 'database', agents_checked: 17, mismatch_count: 0 },
    });
    expect(applied.toolkits.every((t) => t.status === 'created' && t.toolkit_id !== null)).toBe(true);
  });

  test('then for every agent and every tool the legacy answer equals the new one, for a sender with a key and one without', async () => {
    for (const agent of await allAgents()) {
      if (agent.id === OPERATOR_MANAGED_AGENT) continue;
      const legacy = TOOLS.filter((tool) => legacyHasTool(agent.enabled_tools, tool));
      expect({ agent: agent.id, tools: await offered(agent.id, 'Jane <jane+x@acme.com>') }).toEqual({ agent: agent.id, tools: legacy });
      expect({ agent: agent.id, tools: await offered(agent.id, 'not an address') }).toEqual({ agent: agent.id, tools: legacy });
    }
  });

  test("then the operator's toolkits and grants are untouched", async () => {
    expect((await admin.get(`/api/toolkits/${operatorKit}`).expect(200)).body).toMatchObject({
      name: 'Legacy: email_analyzer',
      member_tool_ids: ['document_search'],
    });
    const attachments = (await admin.get(`/api/agents/${OPERATOR_MANAGED_AGENT}/toolkits`).expect(200)).body;
    expect(attachments.map((a: { toolkit: { id: number } }) => a.toolkit.id)).toEqual([supportKit]);
  });

  test('then a second apply changes nothing', async () => {
    const before = await fingerprint(sql);
    const again = await migrateEnabledTools(sql, internalsOf(tg).registry.manifest, { mode: 'apply' });
    expect(again.changes).toEqual({ toolkits_created: 0, toolkits_removed: 0, attachments_created: 0, attachments_removed: 0 });
    expect(again.agents).toMatchObject({ changed: 0, unchanged: 17 });
    expect(await fingerprint(sql)).toEqual(before);
  });

  test('then agents the legacy application adds later are picked up by the next run', async () => {
    const [later] = await insertLegacyAgents(sql, [{ name: 'Added later', enabled_tools: 'task_creator , email_analyzer' }]);
    expect(await offered(later!, 'jane@acme.com')).toEqual([]);
    const next = await migrateEnabledTools(sql, internalsOf(tg).registry.manifest, { mode: 'apply' });
    expect(next.changes).toEqual({ toolkits_created: 0, toolkits_removed: 0, attachments_created: 1, attachments_removed: 0 });
    expect(await offered(later!, 'jane@acme.com')).toEqual(['email_analyzer', 'task_creator']);
  });

  test('then an agent whose string the legacy application changed is re-planned by the next run', async () => {
    await sql.query("UPDATE agents SET enabled_tools = 'document_search' WHERE name = 'Triage'");
    const next = await migrateEnabledTools(sql, internalsOf(tg).registry.manifest, { mode: 'apply' });
    expect(next.changes).toEqual({ toolkits_created: 0, toolkits_removed: 0, attachments_created: 1, attachments_removed: 1 });
    expect(await offered(1, 'jane@acme.com')).toEqual(['document_search']);
  });
});

describe('when the admin undoes the migration', () => {
  let report: MigrationReport;
  let handAttached: number;

  beforeAll(async () => {
    // An operator attached one of the migration's toolkits to an agent by hand.
    const kits = (await admin.get('/api/toolkits').expect(200)).body as { id: number; name: string }[];
    handAttached = kits.find((k) => k.name === 'Legacy: reply_generator')!.id;
    await admin.post(`/api/agents/${OPERATOR_MANAGED_AGENT}/toolkits`).send({ toolkit_id: handAttached }).expect(201);
    report = await undoEnabledTools(sql, internalsOf(tg).registry.manifest);
  });

  test('then every legacy grant and every legacy toolkit nothing else uses is removed', async () => {
    expect(report).toMatchObject({
      mode: 'undo',
      committed: true,
      changes: { attachments_removed: 13, toolkits_removed: 6 },
      verification: { status: 'passed' },
    });
    const legacy = await sql.query("SELECT id FROM agent_toolkits WHERE origin = 'legacy'", { type: QueryTypes.SELECT });
    expect(legacy).toEqual([]);
    for (const agent of await allAgents())
      if (agent.id !== OPERATOR_MANAGED_AGENT) expect(await offered(agent.id, 'jane@acme.com')).toEqual([]);
  });

  test("then a legacy toolkit an operator attached by hand stays, with the operator's grant", async () => {
    expect(report.undo?.kept_toolkits).toEqual([
      { toolkit_id: handAttached, name: 'Legacy: reply_generator', attachments: 1, members_edited: false },
    ]);
    expect(await offered(OPERATOR_MANAGED_AGENT, 'jane@acme.com')).toEqual(['email_analyzer', 'reply_generator']);
  });

  test("then operators' own toolkits stay, and the legacy strings were never changed", async () => {
    const names = ((await admin.get('/api/toolkits').expect(200)).body as { name: string }[]).map((k) => k.name).sort();
    expect(names).toEqual(['All Tools', 'Default Tools', 'Legacy: email_analyzer', 'Legacy: reply_generator', 'Support']);
    const strings = (await allAgents()).slice(0, LEGACY_AGENTS.length).map((a) => a.enabled_tools);
    expect(strings).toEqual(LEGACY_AGENTS.map((a, i) => (i === 0 ? 'document_search' : a.enabled_tools)));
  });
});

describe('when every schema migration is reverted', () => {
  test('then the legacy schema is back as it was, its rows included', async () => {
    await sql.query("UPDATE agents SET enabled_tools = 'email_analyzer,task_creator' WHERE name = 'Triage'");
    await sql.query("DELETE FROM agents WHERE name = 'Added later'");
    await migrateDown(sql, { to: 0 });
    expect(await legacySnapshot(sql)).toEqual(legacyBefore);
  });
});
