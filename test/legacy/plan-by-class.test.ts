// The migration plans and checks agents that share a string by class. These tests hold it to the
// plain planner run agent by agent over the same rows: the same report, lists and their order
// included, with classes, with agents that are not plain among them, and past the bound on classes.
import { QueryTypes, type Sequelize } from 'sequelize';
import { createManifest } from '../../src/core/tool-manifest';
import { readLegacyToolkits, streamAgents, type StoredAgentRow } from '../../src/legacy/agent-rows';
import { MAX_PLAIN_CLASSES, migrateEnabledTools } from '../../src/legacy/migrate-enabled-tools';
import type { MigrationReport, ReportLimits } from '../../src/legacy/report';
import { planEnabledTools } from './support/plan-enabled-tools';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { insertLegacyAgents, LEGACY_AGENTS } from './fixtures/legacy-database';

const manifest = createManifest();
const databases: TestDatabase[] = [];
afterAll(() => Promise.all(databases.map((db) => db.drop())));

async function freshDatabase(): Promise<Sequelize> {
  const db = await createTestDatabase();
  databases.push(db);
  return db.sequelize;
}

/** The plain planner's report over every agent, read in full, one by one. */
async function plannedAgentByAgent(sql: Sequelize, limits: Partial<ReportLimits>): Promise<MigrationReport> {
  return sql.transaction(async (transaction) => {
    const rows: StoredAgentRow[] = [];
    await streamAgents(sql, { withAttachments: true, everyAgentInFull: true, chunk: 500, transaction }, (chunk) => {
      for (const r of chunk) rows.push({ ...r, attachments: r.attachments ?? [] });
    });
    const toolkits = await readLegacyToolkits(sql, transaction);
    return planEnabledTools(rows, { registeredIds: manifest.ids, mapTypos: false, toolkits }, limits).report;
  });
}

const sameAs = (r: MigrationReport) => ({
  agents: r.agents,
  unmatched: r.unmatched,
  unmatched_tokens: r.unmatched_tokens,
  skipped: r.skipped,
  left_out: r.left_out,
  toolkits: r.toolkits.map((t) => ({ tool_ids: t.tool_ids, agents: t.agents })),
});

// Small lists, so that which entries are kept (the first, in id order) is tested too.
const LIMITS = { agents_listed: 7, tokens_listed: 3 };

describe('when many agents share a few strings, and some hold grants the migration did not make or that operators edited', () => {
  let sql: Sequelize;
  beforeAll(async () => {
    sql = await freshDatabase();
    const agents = Array.from({ length: 40 }, () => LEGACY_AGENTS).flat();
    await insertLegacyAgents(sql, agents);
    await migrateEnabledTools(sql, manifest, { mode: 'apply' });
    // After the first apply: strings changed (plans that detach and attach), an operator's grant,
    // a gate rule on a legacy grant, two legacy grants on one agent, and agents added later.
    await sql.query(`UPDATE agents SET enabled_tools = 'reply_generator,' || coalesce(enabled_tools, '') WHERE id % 7 = 0`);
    const [support] = await sql.query<{ id: number }>(
      `INSERT INTO toolkits (name, member_tool_ids) VALUES ('Support', ARRAY['email_analyzer']::varchar(64)[]) RETURNING id`,
      { type: QueryTypes.SELECT },
    );
    await sql.query(
      `INSERT INTO agent_toolkits (agent_id, toolkit_id, origin) SELECT id, ${support!.id}, 'operator' FROM agents WHERE id % 11 = 0`,
    );
    await sql.query(`INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern)
      SELECT at.id, 'allow', '*@acme.com' FROM agent_toolkits at WHERE at.origin = 'legacy' AND at.agent_id % 13 = 0`);
    await sql.query(`INSERT INTO agent_toolkits (agent_id, toolkit_id, origin)
      SELECT a.id, t.id, 'legacy' FROM agents a, toolkits t WHERE a.id % 17 = 0 AND t.legacy_tool_set = 'document_search'
      ON CONFLICT DO NOTHING`);
    await insertLegacyAgents(sql, LEGACY_AGENTS);
  });

  test('then the dry run reports exactly what the planner reports agent by agent', async () => {
    const expected = await plannedAgentByAgent(sql, LIMITS);
    const report = await migrateEnabledTools(sql, manifest, { mode: 'dry_run', batchSize: 50, limits: LIMITS });
    expect(sameAs(report)).toEqual(sameAs(expected));
    expect(report.agents.skipped).toBeGreaterThan(0);
    expect(report.agents.changed).toBeGreaterThan(0);
    expect(report.left_out.unmatched).toBeGreaterThan(0);
    expect(report.verification).toMatchObject({ status: 'passed', agents_checked: expected.agents.follow });
  });

  test('then the apply reports the same, checks every agent it owns, and a second apply finds nothing to do', async () => {
    const expected = await plannedAgentByAgent(sql, LIMITS);
    const report = await migrateEnabledTools(sql, manifest, { mode: 'apply', batchSize: 50, limits: LIMITS });
    expect(sameAs(report)).toEqual(sameAs(expected));
    expect(report.verification).toMatchObject({
      status: 'passed',
      over: 'database',
      agents_checked: expected.agents.follow,
      mismatch_count: 0,
    });
    const again = await migrateEnabledTools(sql, manifest, { mode: 'apply', batchSize: 50, limits: LIMITS });
    expect(again.changes).toEqual({ toolkits_created: 0, toolkits_removed: 0, attachments_created: 0, attachments_removed: 0 });
    expect(again.verification).toMatchObject({ status: 'passed', agents_checked: expected.agents.follow });
  });
});

describe('when the agents hold more distinct strings than the migration plans by class', () => {
  test('then the classes past the bound are planned one agent at a time, the check runs agent by agent, and the report and the grants are the same', async () => {
    const sql = await freshDatabase();
    // Every agent a string of its own: one more class than the bound.
    await sql.query(
      `INSERT INTO agents (name, enabled_tools)
       SELECT 'Agent ' || g, CASE WHEN g % 2 = 0 THEN 'email_analyzer, task_' || g ELSE 'document_search,' || repeat(' ', g % 50) || 'x' || g END
         FROM generate_series(1, $1::int) g`,
      { bind: [MAX_PLAIN_CLASSES + 1] },
    );
    const expected = await plannedAgentByAgent(sql, LIMITS);
    const report = await migrateEnabledTools(sql, manifest, { mode: 'apply', limits: LIMITS });
    expect(sameAs(report)).toEqual(sameAs(expected));
    expect(report.verification).toMatchObject({ status: 'passed', agents_checked: MAX_PLAIN_CLASSES + 1 });
    const [held] = await sql.query<{ n: string }>(`SELECT count(*) AS n FROM agent_toolkits WHERE origin = 'legacy'`, {
      type: QueryTypes.SELECT,
    });
    expect(Number(held!.n)).toBe(MAX_PLAIN_CLASSES + 1);
  });
});

describe('when the legacy enabled_tools column compares case-insensitively (a nondeterministic collation)', () => {
  // Under such a collation 'Email_Analyzer' = 'email_analyzer': a class write or a class check that
  // compared by the column's collation would grant the typo's agent, or check one string for both.
  test.each([
    ['the typo first', ['Email_Analyzer', 'email_analyzer']],
    ['the clean string first', ['email_analyzer', 'Email_Analyzer']],
  ])(
    'then with %s, the apply grants only the agent whose string names the tool, and the check holds every agent to its own string',
    async (_order, strings) => {
      const sql = await freshDatabase();
      await sql.query("CREATE COLLATION legacy_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)");
      await sql.query('ALTER TABLE agents ALTER COLUMN enabled_tools TYPE text COLLATE legacy_ci');
      for (const [i, s] of strings.entries())
        await sql.query('INSERT INTO agents (name, enabled_tools) VALUES (:name, :s)', { replacements: { name: `Agent ${i}`, s } });
      const report = await migrateEnabledTools(sql, manifest, { mode: 'apply' });
      expect(report.verification.status).toBe('passed');
      const held = await sql.query<{ enabled_tools: string; tools: string[] | null }>(
        `SELECT a.enabled_tools::text AS enabled_tools, array_agg(m ORDER BY m) FILTER (WHERE m IS NOT NULL) AS tools
         FROM agents a LEFT JOIN agent_toolkits at ON at.agent_id = a.id LEFT JOIN toolkits t ON t.id = at.toolkit_id LEFT JOIN unnest(t.member_tool_ids) m ON true
        GROUP BY a.id ORDER BY a.id`,
        { type: QueryTypes.SELECT },
      );
      expect(held.map((h) => [h.enabled_tools, h.tools])).toEqual(
        strings.map((s) => [s, s === 'email_analyzer' ? ['email_analyzer'] : null]),
      );
    },
  );
});

describe('when a legacy toolkit has the id 0 and some agents of its string hold no grant', () => {
  test('then the agents holding it and those holding nothing are two classes: only the latter are granted, and the check passes', async () => {
    const sql = await freshDatabase();
    await insertLegacyAgents(sql, Array.from({ length: 10 }, () => LEGACY_AGENTS).flat());
    await migrateEnabledTools(sql, manifest, { mode: 'apply' });
    const select = async <T extends object>(query: string, bind: unknown[] = []) => sql.query<T>(query, { bind, type: QueryTypes.SELECT });
    // Move the most held legacy toolkit to id 0, then take its grant from the first half of the agents, so that each of its strings has agents that hold it and agents that do not.
    const [kit] = await select<{ id: number; name: string; member_tool_ids: string[]; legacy_tool_set: string; held: string }>(
      `SELECT t.id, t.name, t.member_tool_ids, t.legacy_tool_set, count(*) AS held FROM toolkits t JOIN agent_toolkits at ON at.toolkit_id = t.id
        WHERE t.legacy_tool_set IS NOT NULL GROUP BY t.id ORDER BY count(*) DESC, t.id LIMIT 1`,
    );
    await sql.query(`UPDATE toolkits SET legacy_tool_set = NULL, name = name || ' (moving)' WHERE id = $1`, { bind: [kit!.id] });
    await sql.query(`INSERT INTO toolkits (id, name, member_tool_ids, legacy_tool_set) VALUES (0, $1, $2, $3)`, {
      bind: [kit!.name, kit!.member_tool_ids, kit!.legacy_tool_set],
    });
    await sql.query(`UPDATE agent_toolkits SET toolkit_id = 0 WHERE toolkit_id = $1`, { bind: [kit!.id] });
    await sql.query(`DELETE FROM toolkits WHERE id = $1`, { bind: [kit!.id] });
    const removed = await select<{ id: number }>(
      `DELETE FROM agent_toolkits WHERE toolkit_id = 0 AND agent_id <= (SELECT max(id) / 2 FROM agents) RETURNING id`,
    );
    expect(removed.length).toBeGreaterThan(0);
    expect(removed.length).toBeLessThan(Number(kit!.held));

    const expected = await plannedAgentByAgent(sql, LIMITS);
    const report = await migrateEnabledTools(sql, manifest, { mode: 'apply', limits: LIMITS });
    expect(sameAs(report)).toEqual(sameAs(expected));
    expect(report.changes).toMatchObject({ attachments_created: removed.length, attachments_removed: 0 });
    expect(report.verification).toMatchObject({ status: 'passed', mismatch_count: 0 });
    const [held] = await select<{ n: string }>(`SELECT count(*) AS n FROM agent_toolkits WHERE toolkit_id = 0`);
    expect(held!.n).toBe(kit!.held);
  });
});

describe('when most agents share strings whose every token is a tool id', () => {
  /** Counts, while `run` runs, the agents fetched from the migration's cursor and the class aggregates read. */
  async function watchReads<T>(sql: Sequelize, run: () => Promise<T>): Promise<{ result: T; fetched: number; aggregates: number }> {
    const original = sql.query.bind(sql);
    let fetched = 0;
    let aggregates = 0;
    sql.query = (async (...args: Parameters<Sequelize['query']>) => {
      const result = await original(...args);
      const text = typeof args[0] === 'string' ? args[0] : '';
      if (text.startsWith('FETCH FORWARD')) fetched += (result as unknown as unknown[]).length;
      if (text.includes('GROUP BY 1, 2, 3')) aggregates += 1;
      return result;
    }) as Sequelize['query'];
    try {
      return { result: await run(), fetched, aggregates };
    } finally {
      sql.query = original;
    }
  }

  test('then the apply reads one by one only the agents the report lists, and makes each toolkit in the order of its first agent', async () => {
    const sql = await freshDatabase();
    await insertLegacyAgents(sql, Array.from({ length: 40 }, () => LEGACY_AGENTS).flat());
    const { result: report, fetched } = await watchReads(sql, () => migrateEnabledTools(sql, manifest, { mode: 'apply', batchSize: 50 }));
    expect(report.verification.status).toBe('passed');
    expect(report.agents.read).toBe(40 * LEGACY_AGENTS.length);
    expect(report.agents.with_unmatched_tokens).toBeGreaterThan(0);
    expect(fetched).toBe(report.agents.with_unmatched_tokens);
    const kits = await sql.query<{ id: number; first: number }>(
      `SELECT t.id, min(at.agent_id) AS first FROM toolkits t JOIN agent_toolkits at ON at.toolkit_id = t.id GROUP BY t.id ORDER BY t.id`,
      { type: QueryTypes.SELECT },
    );
    expect(kits.length).toBe(report.changes.toolkits_created);
    expect(kits.map((k) => k.first)).toEqual([...kits.map((k) => k.first)].sort((a, b) => a - b));
  });

  test('then a second apply changes nothing, reads the classes once for the plan and the check alike, and reads one by one only the agents the report lists', async () => {
    const sql = await freshDatabase();
    await insertLegacyAgents(sql, Array.from({ length: 40 }, () => LEGACY_AGENTS).flat());
    await migrateEnabledTools(sql, manifest, { mode: 'apply' });
    const { result: again, aggregates, fetched } = await watchReads(sql, () => migrateEnabledTools(sql, manifest, { mode: 'apply' }));
    expect(again.changes).toEqual({ toolkits_created: 0, toolkits_removed: 0, attachments_created: 0, attachments_removed: 0 });
    expect(again.verification).toMatchObject({ status: 'passed', agents_checked: again.agents.follow });
    expect(aggregates).toBe(1);
    expect(fetched).toBe(again.agents.with_unmatched_tokens);
  });
});
