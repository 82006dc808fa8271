// The schema migrations against legacy tables they cannot or need not change: they refuse, with
// nothing changed, a table toolgate could not use; they add nothing to a table that has it all;
// and on a fresh database they mark the tables they create, so that down() may drop them.
import { QueryTypes, type Sequelize } from 'sequelize';
import { migrateDown, migrateUp } from '../../src/db/migrate';
import { createEmptyDatabase, type TestDatabase } from '../support/database';
import { legacySnapshot } from './support/snapshots';

const databases: TestDatabase[] = [];
async function emptyDatabase(): Promise<Sequelize> {
  const db = await createEmptyDatabase();
  databases.push(db);
  return db.sequelize;
}
afterAll(() => Promise.all(databases.map((db) => db.drop())));

const tableComment = async (sql: Sequelize, table: string) =>
  (
    await sql.query<{ c: string | null }>(`SELECT obj_description(to_regclass(:table), 'pg_class') AS c`, {
      replacements: { table },
      type: QueryTypes.SELECT,
    })
  )[0]?.c;

describe('when a legacy agents table has a required column toolgate would not fill', () => {
  test('then the migration refuses, naming the column, and changes nothing', async () => {
    const sql = await emptyDatabase();
    await sql.query(`CREATE TABLE agents (id SERIAL PRIMARY KEY, name TEXT NOT NULL, enabled_tools TEXT, owner_id INTEGER NOT NULL);
      INSERT INTO agents (name, enabled_tools, owner_id) VALUES ('A', 'email_analyzer', 7);`);
    const before = await legacySnapshot(sql);
    await expect(migrateUp(sql, { adoptLegacyTables: true })).rejects.toThrow(
      /Cannot adopt the legacy "agents" table: .*owner_id are NOT NULL without a default/,
    );
    expect(await legacySnapshot(sql)).toEqual(before);
  });
});

describe('when a legacy agents table has a column of a type toolgate cannot read', () => {
  test('then the migration refuses, naming the column and the type it needs', async () => {
    const sql = await emptyDatabase();
    await sql.query(`CREATE TABLE agents (id SERIAL PRIMARY KEY, name TEXT NOT NULL, enabled_tools JSONB)`);
    await expect(migrateUp(sql, { adoptLegacyTables: true })).rejects.toThrow(
      /its "enabled_tools" column is jsonb, where toolgate needs text or character varying/,
    );
  });

  test('then an id that is not a key is refused too, since grants must reference it', async () => {
    const sql = await emptyDatabase();
    await sql.query(`CREATE TABLE agents (id INTEGER, name TEXT NOT NULL, enabled_tools TEXT)`);
    await expect(migrateUp(sql, { adoptLegacyTables: true })).rejects.toThrow(/"id" column is not a primary key or unique/);
  });
});

describe('when the legacy agents table already has every column toolgate needs', () => {
  test("then no column is added and nothing of the table's own changes (only toolgate_ indexes join it), and reverting leaves the table as it was", async () => {
    const sql = await emptyDatabase();
    await sql.query(`CREATE TABLE agents (id BIGSERIAL PRIMARY KEY, name VARCHAR(100) NOT NULL, description TEXT, system_prompt TEXT,
        enabled_tools VARCHAR(2000), created_at TIMESTAMP, updated_at TIMESTAMP, escalation_address VARCHAR(320));
      INSERT INTO agents (name, enabled_tools) VALUES ('Big ids', 'email_analyzer');`);
    const before = await legacySnapshot(sql, { tables: ['agents'] });
    const legacyBefore = await legacySnapshot(sql, { tables: ['agents'], legacyOnly: true });
    await migrateUp(sql, { adoptLegacyTables: true });
    expect(await legacySnapshot(sql, { tables: ['agents'], legacyOnly: true })).toEqual(legacyBefore);
    await migrateDown(sql, { to: 0 });
    expect(await legacySnapshot(sql, { tables: ['agents'] })).toEqual(before);
  });
});

describe('when the migrations run on an empty database', () => {
  test('then the tables they create are marked as created by toolgate', async () => {
    const sql = await emptyDatabase();
    await migrateUp(sql, { adoptLegacyTables: true });
    expect(await tableComment(sql, 'agents')).toBe('created by toolgate');
    expect(await tableComment(sql, 'tool_calls')).toBe('created by toolgate');
  });
});
