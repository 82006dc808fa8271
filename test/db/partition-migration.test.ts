// The partitioning migration (20261206000001) on tables that hold records: up() moves each into a
// table partitioned by month, every row where it was, and down() gives back the plain tables, their
// rows to the byte (each table's rows as text in the order they lie on disk, as a data dump writes
// them) and their definitions as they were; and on Debian's PostgreSQL, whose pg_dump reads it, a
// pg_dump of the database after up and down is the one before.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createSequelize } from '../../src/db/connect';
import { withClient, withDatabase } from '../../src/db/database-url';
import { migrateDown, migrateUp } from '../../src/db/migrate';
import { startDebianCluster } from '../legacy/support/debian-postgres';
import { createTestDatabase, type TestDatabase } from '../support/database';

const MIGRATION = '20261206000001-partition-record-tables.ts';
// The migrations after it go down and up with it, so that what is compared is the partitioning's alone.
const LATER = readdirSync(join(__dirname, '../../migrations'))
  .filter((f) => f.endsWith('.ts'))
  .sort()
  .filter((f) => f > MIGRATION);
const DOWN = { to: MIGRATION };
const TABLES = ['tool_calls', 'agent_runs', 'cap_hits', 'agent_message_ids', 'approval_requests', 'threads'];

const ARRANGE = `
  INSERT INTO agents (id, name) VALUES (901, 'Finance');
  INSERT INTO threads (id, agent_id, subject, reference) VALUES (901, 901, 'Refund', 'thr_901');
  INSERT INTO agent_runs (id, agent_id, thread_id, run, message, tools_offered, created_at, completed_at, stopped)
    SELECT 900 + g, 901, 901, 'sender', jsonb_build_object('from', 'mara@thescoop.com', 'n', g), ARRAY['process_refund'],
           timestamptz '2026-06-01 00:00:00+00' + g * interval '9 days', timestamptz '2026-06-01 00:00:01+00' + g * interval '9 days', 'reply'
      FROM generate_series(1, 20) g;
  INSERT INTO agent_message_ids (agent_id, message_id, thread_id, run_id, origin) SELECT 901, '<m' || g || '@thescoop.com>', 901, 900 + g, 'inbound' FROM generate_series(1, 20) g;
  INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, created_at)
    SELECT 901, 'process_refund', 'process_refund', CASE WHEN g % 7 = 0 THEN 'denied' ELSE 'success' END, 'sender', 'mara@thescoop.com', g,
           timestamptz '2026-06-01 00:00:00+00' + g * interval '3 hours'
      FROM generate_series(1, 500) g;
  INSERT INTO approval_requests (agent_id, attachment_id, tool_id, input, input_digest, scope, run, routing_key, thread_id, run_id, expires_at, code)
    VALUES (901, 1, 'process_refund', '{"order": "SCP-1042"}', repeat('a', 32), 'thread:901', 'sender', 'mara@thescoop.com', 901, 905, now() + interval '1 day', 'ABCDEF12');
  INSERT INTO cap_usage (id, cap_key, window_s, used, last_at) OVERRIDING SYSTEM VALUE VALUES (901, 'refunds|mara', 86400, 3, now());
  INSERT INTO cap_hits (usage_id, at) SELECT 901, now() - g * interval '1 minute' FROM generate_series(1, 3) g;
`;

async function all<T extends object>(sequelize: Sequelize, sql: string): Promise<T[]> {
  return sequelize.query<T>(sql, { type: QueryTypes.SELECT });
}

/** Each table's rows, as text, in the order they lie on disk; and where each sequence stands. */
async function dataDump(sequelize: Sequelize): Promise<Record<string, string>> {
  const dump: Record<string, string> = {};
  for (const table of TABLES) {
    const [row] = await all<{ rows: string | null }>(
      sequelize,
      `SELECT string_agg(t::text, E'\\n' ORDER BY t.ctid) AS rows FROM ${table} t`,
    );
    dump[table] = row?.rows ?? '';
  }
  for (const s of await all<{ name: string; last: string }>(
    sequelize,
    `SELECT sequencename AS name, last_value::text AS last FROM pg_sequences WHERE sequencename IN ('tool_calls_id_seq', 'agent_runs_id_seq')`,
  ))
    dump[s.name] = s.last;
  return dump;
}

/** What a schema dump would say of the tables: columns, constraints, indexes and triggers. */
async function definitions(sequelize: Sequelize): Promise<unknown[]> {
  return all(
    sequelize,
    `SELECT c.relname, c.relkind,
            (SELECT json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod), 'notnull', a.attnotnull,
                                               'default', pg_get_expr(d.adbin, d.adrelid), 'comment', col_description(c.oid, a.attnum)) ORDER BY a.attnum)
               FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
            (SELECT json_agg(json_build_object('name', k.conname, 'def', pg_get_constraintdef(k.oid)) ORDER BY k.conname)
               FROM pg_constraint k WHERE k.conrelid = c.oid) AS constraints,
            (SELECT json_agg(pg_get_indexdef(i.indexrelid) ORDER BY pg_get_indexdef(i.indexrelid)) FROM pg_index i WHERE i.indrelid = c.oid) AS indexes,
            (SELECT json_agg(t.tgname ORDER BY t.tgname) FROM pg_trigger t WHERE t.tgrelid = c.oid AND NOT t.tgisinternal) AS triggers,
            obj_description(c.oid, 'pg_class') AS comment
       FROM pg_class c WHERE c.relname IN (:tables) ORDER BY c.relname`.replace(':tables', TABLES.map((t) => `'${t}'`).join(', ')),
  );
}

const partitionsOf = (sequelize: Sequelize, table: string) =>
  all<{ name: string; lo: string | null; hi: string }>(
    sequelize,
    `SELECT partition::text AS name, lo::text, hi::text FROM toolgate_partitions('${table}') ORDER BY hi`,
  );

describe('the partitioning migration, on tables that hold records', () => {
  let db: TestDatabase;
  let before: unknown[];

  beforeAll(async () => {
    db = await createTestDatabase();
    expect(await migrateDown(db.sequelize, DOWN)).toEqual([...LATER].reverse().concat(MIGRATION));
    await db.sequelize.query(ARRANGE);
    await db.sequelize.query(`SELECT setval('tool_calls_id_seq', (SELECT max(id) FROM tool_calls)), setval('agent_runs_id_seq', 920)`);
    before = await definitions(db.sequelize);
    expect(await migrateUp(db.sequelize)).toEqual([MIGRATION, ...LATER]);
  });
  afterAll(() => db.drop());

  it('when migrated up, then each record table is partitioned: the old table holds every row before the bound, and the months ahead have partitions', async () => {
    const kinds = await all<{ relname: string; relkind: string }>(
      db.sequelize,
      `SELECT relname, relkind FROM pg_class WHERE relname IN ('tool_calls', 'agent_runs', 'cap_hits', 'tool_calls_legacy') ORDER BY relname`,
    );
    expect(kinds).toEqual([
      { relname: 'agent_runs', relkind: 'p' },
      { relname: 'cap_hits', relkind: 'p' },
      { relname: 'tool_calls', relkind: 'p' },
      { relname: 'tool_calls_legacy', relkind: 'r' },
    ]);
    const parts = await partitionsOf(db.sequelize, 'tool_calls');
    expect(parts[0]).toMatchObject({ name: 'tool_calls_legacy', lo: null });
    expect(parts.length).toBeGreaterThanOrEqual(2);
    expect(parts.slice(1).every((p) => /^tool_calls_p\d{4}_\d{2}$/.test(p.name))).toBe(true);
    const [counts] = await all<{ calls: string; legacy: string }>(
      db.sequelize,
      `SELECT (SELECT count(*) FROM tool_calls) AS calls, (SELECT count(*) FROM ONLY tool_calls_legacy) AS legacy`,
    );
    expect(counts).toEqual({ calls: '500', legacy: '500' });
  });

  it('when migrated up, then a run still has one key: the same id again is refused, and a message id still points at its run', async () => {
    await expect(
      db.sequelize.query(
        `INSERT INTO agent_runs (id, agent_id, run, message, tools_offered, created_at) VALUES (905, 901, 'scheduled', '{}', '{}', now() + interval '40 days')`,
      ),
    ).rejects.toMatchObject({ original: { constraint: 'agent_run_keys_pkey' } });
    await expect(
      db.sequelize.query(
        `INSERT INTO agent_message_ids (agent_id, message_id, thread_id, run_id, origin) VALUES (901, '<x@y.z>', 901, 123456, 'inbound')`,
      ),
    ).rejects.toMatchObject({ original: { constraint: 'agent_message_ids_run_key_fkey' } });
  });

  it('when migrated down after up, then the tables hold the same rows in the same order, and are defined as before', async () => {
    const other = await createTestDatabase();
    try {
      await migrateDown(other.sequelize, DOWN);
      await other.sequelize.query(ARRANGE);
      await other.sequelize.query(`SELECT setval('tool_calls_id_seq', (SELECT max(id) FROM tool_calls)), setval('agent_runs_id_seq', 920)`);
      const first = await dataDump(other.sequelize);
      await migrateUp(other.sequelize);
      await migrateDown(other.sequelize, DOWN);
      expect(await dataDump(other.sequelize)).toEqual(first);
      expect(await definitions(other.sequelize)).toEqual(before);
    } finally {
      await other.drop();
    }
  });

  it('when a call runs in a partition made by the move, then the decision log has its entry once, as on the plain table', async () => {
    await db.sequelize.query(
      `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, created_at) VALUES (901, 'ahead', 'ahead', 'started', 'sender', date_trunc('month', now()) + interval '35 days');
       UPDATE tool_calls SET status = 'success' WHERE tool_id = 'ahead';`,
    );
    const entries = await all<{ event: string; partition: string }>(
      db.sequelize,
      `SELECT l.event, c.tableoid::regclass::text AS partition FROM decision_log l JOIN tool_calls c ON c.id = l.tool_call_id WHERE c.tool_id = 'ahead'`,
    );
    expect(entries).toEqual([{ event: 'completed', partition: expect.stringMatching(/^tool_calls_p\d{4}_\d{2}$/) }]);
  });

  it('when a record is written into a month ahead and the migration is undone, then the record is kept in the plain table, and no decision is logged again', async () => {
    await db.sequelize.query(
      `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, created_at) VALUES (901, 'lookup', 'lookup', 'success', 'sender', date_trunc('month', now()) + interval '62 days')`,
    );
    const [{ partition }] = await all<{ partition: string }>(
      db.sequelize,
      `SELECT tableoid::regclass::text AS partition FROM tool_calls WHERE tool_id = 'lookup'`,
    );
    expect(partition).toMatch(/^tool_calls_p\d{4}_\d{2}$/);
    await migrateDown(db.sequelize, DOWN);
    const [row] = await all<{ n: string; kind: string }>(
      db.sequelize,
      `SELECT (SELECT count(*) FROM tool_calls) AS n, (SELECT relkind::text FROM pg_class WHERE relname = 'tool_calls') AS kind`,
    );
    expect(row).toEqual({ n: '502', kind: 'r' });
    const [logged] = await all<{ entries: string; records: string }>(
      db.sequelize,
      `SELECT (SELECT count(*) FROM decision_log) AS entries, (SELECT count(*) FROM tool_calls WHERE status <> 'started') AS records`,
    );
    expect(logged.entries).toBe(logged.records);
  });
});

describe("the partitioning migration on Debian's PostgreSQL, with pg_dump", () => {
  it('when a database with records is migrated up and down again, then pg_dump gives the same dump, data and schema', async () => {
    const cluster = await startDebianCluster();
    const url = withDatabase(cluster.url, 'records');
    await withClient(cluster.url, (c) => c.query('CREATE DATABASE records'));
    const sequelize = createSequelize(url);
    try {
      await migrateUp(sequelize);
      await migrateDown(sequelize, DOWN);
      await sequelize.query(ARRANGE);
      const before = await cluster.dump(url);
      const data = await cluster.dump(url, ['--data-only', ...TABLES.map((t) => `--table=${t}`)]);
      expect(data).toMatch(/COPY public\.tool_calls /);
      expect(await migrateUp(sequelize)).toEqual([MIGRATION, ...LATER]);
      const partitioned = await cluster.dump(url);
      expect(partitioned).toMatch(/CREATE TABLE public\.tool_calls \([^;]*\)\s*PARTITION BY RANGE \(created_at\)/);
      await migrateDown(sequelize, DOWN);
      expect(await cluster.dump(url, ['--data-only', ...TABLES.map((t) => `--table=${t}`)])).toEqual(data);
      expect(await cluster.dump(url)).toEqual(before);
    } finally {
      await sequelize.close();
      await cluster.stop();
    }
  }, 120_000);
});
