// The apply's guarantees one by one, on a migrated database whose agents the legacy application
// wrote: all or nothing, the parity check that aborts it, typo mapping, grants operators edited,
// waiting for other writers, and a dry run over a legacy database not yet adopted.
import { QueryTypes, type Sequelize } from 'sequelize';
import { createManifest } from '../../src/core/tool-manifest';
import { ParityMismatchError, SchemaNotMigratedError } from '../../src/errors';
import { migrateEnabledTools } from '../../src/legacy/migrate-enabled-tools';
import { undoEnabledTools } from '../../src/legacy/undo-enabled-tools';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../support/database';
import { insertLegacyAgents, LEGACY_AGENTS, LEGACY_SCHEMA_SQL } from './fixtures/legacy-database';
import { fingerprint } from './support/snapshots';

const manifest = createManifest();
const databases: TestDatabase[] = [];

async function legacyFilledDatabase(): Promise<Sequelize> {
  const db = await createTestDatabase();
  databases.push(db);
  await insertLegacyAgents(
    db.sequelize,
    LEGACY_AGENTS.filter((a) => a.name !== 'Operator managed'),
  );
  return db.sequelize;
}

afterAll(() => Promise.all(databases.map((db) => db.drop())));

const grantsOf = (sql: Sequelize, agentName: string) =>
  sql.query<{ name: string; origin: string }>(
    `SELECT t.name, at.origin FROM agent_toolkits at JOIN toolkits t ON t.id = at.toolkit_id JOIN agents a ON a.id = at.agent_id
      WHERE a.name = :agentName ORDER BY t.name`,
    { replacements: { agentName }, type: QueryTypes.SELECT },
  );

describe('when the check inside the apply finds a grant that differs from the legacy string', () => {
  test('then the apply is rolled back, nothing changes, and the error carries the report', async () => {
    const sql = await legacyFilledDatabase();
    // Something beyond the planner (here a trigger) puts a gate rule on every new legacy grant.
    await sql.query(`
      CREATE FUNCTION meddle() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern) VALUES (NEW.id, 'allow', '*@acme.com'); RETURN NEW; END $$;
      CREATE TRIGGER meddle AFTER INSERT ON agent_toolkits FOR EACH ROW EXECUTE FUNCTION meddle();`);
    const before = await fingerprint(sql, { sequences: false });
    const failure = await migrateEnabledTools(sql, manifest, { mode: 'apply' }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ParityMismatchError);
    const report = (failure as ParityMismatchError).report;
    expect(report.verification).toMatchObject({ status: 'failed', over: 'database' });
    expect(report.verification.mismatches[0]).toMatchObject({
      tool_id: null,
      problem: expect.stringContaining('no longer follows its string'),
    });
    expect(report.verification.mismatches[1]).toMatchObject({ tool_id: null, problem: expect.stringContaining('has gate rules') });
    expect(report.verification.mismatches.some((m) => m.tool_id === 'email_analyzer' && m.legacy === true && m.new === false)).toBe(true);
    expect(await fingerprint(sql, { sequences: false })).toEqual(before);
  });
});

describe('when an apply fails after some batches were written', () => {
  test('then every batch is rolled back with it: the apply is one transaction', async () => {
    const sql = await legacyFilledDatabase();
    const [last] = await sql.query<{ id: number }>("SELECT id FROM agents WHERE name = 'Knowledge base'", { type: QueryTypes.SELECT });
    await sql.query(`
      CREATE FUNCTION refuse_late() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.agent_id >= ${last!.id} THEN RAISE EXCEPTION 'disk full'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_late BEFORE INSERT ON agent_toolkits FOR EACH ROW EXECUTE FUNCTION refuse_late();`);
    const before = await fingerprint(sql, { sequences: false });
    await expect(migrateEnabledTools(sql, manifest, { mode: 'apply', batchSize: 2 })).rejects.toThrow('disk full');
    expect(await fingerprint(sql, { sequences: false })).toEqual(before);
  });
});

describe('when the admin asks to map typos', () => {
  let sql: Sequelize;
  beforeAll(async () => {
    sql = await legacyFilledDatabase();
  });

  test('then each suggestion is granted, the report marks it mapped, and parity holds for the rest', async () => {
    const report = await migrateEnabledTools(sql, manifest, { mode: 'apply', mapTypos: true });
    expect(report.verification.status).toBe('passed');
    expect(report.agents.with_mapped_typos).toBe(4);
    expect(report.unmatched.filter((u) => u.mapped).map((u) => u.token)).toEqual([
      'Email_Analyzer',
      'email-analyzer',
      'document_serach',
      '\ufefftask_creator',
    ]);
    expect(await grantsOf(sql, 'Case variant')).toEqual([{ name: 'Legacy: email_analyzer, task_creator', origin: 'legacy' }]);
  });

  test('then a later plain run keeps the mapping and changes nothing', async () => {
    const before = await fingerprint(sql);
    const report = await migrateEnabledTools(sql, manifest, { mode: 'apply' });
    expect(report.changes).toMatchObject({ attachments_created: 0, attachments_removed: 0 });
    expect(report.agents.with_mapped_typos).toBe(4);
    expect(await fingerprint(sql)).toEqual(before);
  });

  test('then once the string changes, the next plain run grants exactly the new string', async () => {
    await sql.query("UPDATE agents SET enabled_tools = 'Email_Analyzer,reply_generator' WHERE name = 'Case variant'");
    await migrateEnabledTools(sql, manifest, { mode: 'apply' });
    expect(await grantsOf(sql, 'Case variant')).toEqual([{ name: 'Legacy: reply_generator', origin: 'legacy' }]);
  });
});

describe('when an operator has edited what the migration made', () => {
  let sql: Sequelize;
  beforeAll(async () => {
    sql = await legacyFilledDatabase();
    await migrateEnabledTools(sql, manifest, { mode: 'apply' });
    await sql.query(`INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern)
      SELECT at.id, 'allow', '*@thescoop.com' FROM agent_toolkits at JOIN agents a ON a.id = at.agent_id WHERE a.name = 'Knowledge base'`);
    await sql.query("UPDATE agents SET enabled_tools = 'task_creator' WHERE name = 'Knowledge base'");
    await sql.query(`UPDATE toolkits SET member_tool_ids = ARRAY['document_search', 'email_analyzer', 'task_creator']::varchar(64)[]
      WHERE legacy_tool_set = 'document_search,email_analyzer'`);
  });

  test('then the next apply leaves those grants alone and reports their agents as skipped', async () => {
    const report = await migrateEnabledTools(sql, manifest, { mode: 'apply' });
    expect(report.skipped).toEqual([
      expect.objectContaining({ agent_name: 'Doubled commas', reason: 'edited_legacy_toolkit' }),
      expect.objectContaining({ agent_name: 'Knowledge base', reason: 'edited_legacy_grant' }),
    ]);
    expect(report.verification.status).toBe('passed');
    expect(await grantsOf(sql, 'Knowledge base')).toEqual([{ name: 'Legacy: document_search', origin: 'legacy' }]);
  });

  test('then the undo keeps the edited grant, its toolkit and the edited toolkit, and lists them', async () => {
    const report = await undoEnabledTools(sql, manifest);
    expect(report.undo?.kept_attachments).toEqual([expect.objectContaining({ toolkit_name: 'Legacy: document_search' })]);
    expect(report.undo?.kept_toolkits).toEqual([
      expect.objectContaining({ name: 'Legacy: document_search, email_analyzer', attachments: 0, members_edited: true }),
      expect.objectContaining({ name: 'Legacy: document_search', attachments: 1, members_edited: false }),
    ]);
    expect(await grantsOf(sql, 'Knowledge base')).toEqual([{ name: 'Legacy: document_search', origin: 'legacy' }]);
    expect(await grantsOf(sql, 'Doubled commas')).toEqual([]);
  });
});

describe('when another transaction is writing to agents', () => {
  test('then the apply waits for it, up to its lock timeout, and then gives up changing nothing', async () => {
    const sql = await legacyFilledDatabase();
    const before = await fingerprint(sql);
    const writer = await sql.transaction();
    try {
      await sql.query("UPDATE agents SET name = name WHERE name = 'Triage'", { transaction: writer });
      await expect(migrateEnabledTools(sql, manifest, { mode: 'apply', lockTimeoutSeconds: 1 })).rejects.toMatchObject({
        code: 'migration_busy',
        status: 409,
      });
    } finally {
      await writer.rollback();
    }
    expect(await fingerprint(sql)).toEqual(before);
  });
});

describe("when the database is still the legacy application's, not yet adopted", () => {
  let sql: Sequelize;
  beforeAll(async () => {
    const db = await createEmptyDatabase();
    databases.push(db);
    sql = db.sequelize;
    await sql.query(LEGACY_SCHEMA_SQL);
    await insertLegacyAgents(sql, LEGACY_AGENTS);
  });

  test('then a dry run previews the migration and changes nothing', async () => {
    const before = await fingerprint(sql);
    const report = await migrateEnabledTools(sql, manifest, { mode: 'dry_run' });
    expect(report.agents).toMatchObject({ read: 18, follow: 18, skipped: 0 });
    expect(report.verification.status).toBe('passed');
    expect(await fingerprint(sql)).toEqual(before);
  });

  test('then an apply refuses until the schema migrations have run', async () => {
    await expect(migrateEnabledTools(sql, manifest, { mode: 'apply' })).rejects.toBeInstanceOf(SchemaNotMigratedError);
  });
});
