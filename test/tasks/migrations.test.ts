// The tasks migration adopting a database the legacy Python app made: its `tasks` table is kept
// with every column and row, gains only toolgate's columns and idempotency key, and down() gives
// back exactly the legacy table.
import { QueryTypes, type Sequelize } from 'sequelize';
import { migrateDown, migrateUp } from '../../src/db/migrate';
import { TaskStore } from '../../src/tasks/task-store';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../support/database';

// The legacy FastAPI/SQLAlchemy schema: nullable columns, Python-side defaults, no cascades.
const LEGACY_SCHEMA = `
  CREATE TABLE agents (
    id SERIAL PRIMARY KEY, name VARCHAR NOT NULL, description TEXT, system_prompt TEXT,
    enabled_tools TEXT, created_at TIMESTAMP WITHOUT TIME ZONE
  );
  CREATE TABLE tasks (
    id SERIAL PRIMARY KEY, agent_id INTEGER REFERENCES agents (id), title VARCHAR, description TEXT,
    status VARCHAR, priority VARCHAR, due_date TIMESTAMP WITHOUT TIME ZONE, created_at TIMESTAMP WITHOUT TIME ZONE
  );
  CREATE INDEX ix_tasks_agent_id ON tasks (agent_id);
  INSERT INTO agents (name, enabled_tools) VALUES ('Sundae', 'email_analyzer,task_creator');
  INSERT INTO tasks (agent_id, title, description, status, priority, due_date, created_at) VALUES
    (1, 'Call the dairy', 'Order more cream', 'pending', 'high', '2024-05-03 00:00:00', '2024-05-01 08:00:00'),
    (1, 'Fix freezer 2', NULL, 'completed', 'urgent', '2024-05-04 15:30:00', '2024-05-01 09:00:00'),
    (1, 'Refund order SCP-1042', NULL, 'pending', NULL, NULL, NULL);
`;

async function rows(sequelize: Sequelize, sql: string): Promise<unknown[]> {
  return sequelize.query(sql, { type: QueryTypes.SELECT });
}

const legacyRows = (s: Sequelize) =>
  rows(s, 'SELECT id, agent_id, title, description, status, priority, due_date, created_at FROM tasks WHERE id <= 3 ORDER BY id');
const columns = (s: Sequelize) =>
  rows(
    s,
    `SELECT attname, format_type(atttypid, atttypmod) AS type, attnotnull FROM pg_attribute WHERE attrelid = 'tasks'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
  );
const indexes = (s: Sequelize) => rows(s, `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'tasks' ORDER BY indexname`);

const message = { message_id: '<m1@acme.com>', from: 'jane@acme.com', subject: 'Order', body: 'Please refund SCP-1042.' };

describe('adopting a legacy tasks table', () => {
  let db: TestDatabase;
  let before: { rows: unknown[]; columns: unknown[]; indexes: unknown[] };

  beforeAll(async () => {
    db = await createEmptyDatabase();
    await db.sequelize.query(LEGACY_SCHEMA);
    before = { rows: await legacyRows(db.sequelize), columns: await columns(db.sequelize), indexes: await indexes(db.sequelize) };
    await migrateUp(db.sequelize, { adoptLegacyTables: true });
  });
  afterAll(() => db.drop());

  it('when migrated, then every legacy column and row is as it was, and only toolgate columns were added', async () => {
    expect(await legacyRows(db.sequelize)).toEqual(before.rows);
    const after = (await columns(db.sequelize)) as { attname: string }[];
    expect(after.slice(0, before.columns.length)).toEqual(before.columns);
    expect(after.slice(before.columns.length).map((c) => c.attname)).toEqual(['due', 'source_message_id', 'source_key']);
  });

  it('when migrated, then legacy tasks are listed, with their due date in ISO 8601', async () => {
    expect(await new TaskStore(db.sequelize).listTasks(1)).toEqual([
      {
        id: 1,
        agent_id: 1,
        title: 'Call the dairy',
        status: 'pending',
        due: '2024-05-03',
        source_message_id: null,
        created_at: expect.any(String),
      },
      {
        id: 2,
        agent_id: 1,
        title: 'Fix freezer 2',
        status: 'completed',
        due: '2024-05-04T15:30:00',
        source_message_id: null,
        created_at: expect.any(String),
      },
      { id: 3, agent_id: 1, title: 'Refund order SCP-1042', status: 'pending', due: null, source_message_id: null, created_at: null },
    ]);
  });

  it('when migrated, then toolgate files tasks idempotently in the legacy table, beside a legacy task of the same title', async () => {
    const store = new TaskStore(db.sequelize);
    const first = await store.createTasksFromActionItems(1, [{ title: 'Refund order SCP-1042', due: '2024-05-06' }], message);
    const again = await store.createTasksFromActionItems(1, [{ title: 'Refund order SCP-1042' }], message);
    expect(again).toEqual(first);
    expect(first[0]).toMatchObject({ id: 4, status: 'pending', due: '2024-05-06', source_message_id: '<m1@acme.com>' });
    expect(await store.listTasks(1)).toHaveLength(4);
  });

  it('when migrated down past the tasks migration, then the legacy table is exactly as it was', async () => {
    expect((await migrateDown(db.sequelize, { to: '20261130000008-create-tasks.ts' })).at(-1)).toBe('20261130000008-create-tasks.ts');
    expect(await legacyRows(db.sequelize)).toEqual(before.rows);
    expect(await columns(db.sequelize)).toEqual(before.columns);
    expect(await indexes(db.sequelize)).toEqual(before.indexes);
  });
});

describe('a legacy tasks table toolgate could not write to', () => {
  it('when a toolgate column has another type in the legacy table, then adoption stops naming it, and the table is untouched', async () => {
    const db = await createEmptyDatabase();
    try {
      await db.sequelize.query('CREATE TABLE tasks (id SERIAL PRIMARY KEY, agent_id INTEGER, title VARCHAR, due DATE)');
      const before = await columns(db.sequelize);
      await expect(migrateUp(db.sequelize, { adoptLegacyTables: true })).rejects.toThrow(/"tasks" table: .*"due" column is date/);
      expect(await columns(db.sequelize)).toEqual(before);
    } finally {
      await db.drop();
    }
  });
});

describe('a database toolgate created', () => {
  it('when migrated, then tasks is marked as created by toolgate and carries the idempotency key', async () => {
    const db = await createTestDatabase();
    try {
      expect(await rows(db.sequelize, `SELECT obj_description('tasks'::regclass, 'pg_class') AS c`)).toEqual([
        { c: 'created by toolgate' },
      ]);
      expect(await rows(db.sequelize, `SELECT indexdef FROM pg_indexes WHERE indexname = 'tasks_toolgate_source_key'`)).toEqual([
        { indexdef: expect.stringMatching(/UNIQUE INDEX .* \(agent_id, source_key, title\)/) },
      ]);
    } finally {
      await db.drop();
    }
  });
});
