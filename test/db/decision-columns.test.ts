// The decision columns of tool-call records (SEMANTICS §16): `policy_version` and `reason`, added by
// their migration as nullable columns, so records written before it read as null, and taken away
// exactly by its down().
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { QueryTypes, type Sequelize } from 'sequelize';
import { migrateDown, migrateUp } from '../../src/db/migrate';
import { pageToolCalls } from '../../src/services/tool-calls';
import { createTestDatabase, type TestDatabase } from '../support/database';

const MIGRATION = '20261205000001-tool-call-decisions.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

interface Column {
  column_name: string;
  data_type: string;
  is_nullable: string;
  comment: string | null;
}

async function decisionColumns(sequelize: Sequelize): Promise<Column[]> {
  return sequelize.query<Column>(
    `SELECT column_name, data_type, is_nullable, col_description('tool_calls'::regclass, ordinal_position) AS comment
       FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'tool_calls' AND column_name IN ('policy_version', 'reason')
      ORDER BY column_name`,
    { type: QueryTypes.SELECT },
  );
}

async function insertOldRecord(sequelize: Sequelize): Promise<number> {
  const [agent] = await sequelize.query<{ id: number }>(`INSERT INTO agents (name) VALUES ('Sundae') RETURNING id`, {
    type: QueryTypes.SELECT,
  });
  await sequelize.query(
    `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, error)
     VALUES (:agent, 'process_refund', 'process_refund', 'denied', 'sender', 'jane@acme.com', 0, 'Not offered')`,
    { replacements: { agent: agent!.id }, type: QueryTypes.INSERT },
  );
  return agent!.id;
}

test('when the migrations have run, then tool_calls has a nullable bigint policy_version and a nullable reason, marked as added', async () => {
  expect(await decisionColumns(db.sequelize)).toEqual([
    { column_name: 'policy_version', data_type: 'bigint', is_nullable: 'YES', comment: 'added by toolgate' },
    { column_name: 'reason', data_type: 'character varying', is_nullable: 'YES', comment: 'added by toolgate' },
  ]);
});

test('when a record was written without the decision columns, then the listing gives it null for both', async () => {
  const agent = await insertOldRecord(db.sequelize);
  const [record] = (await pageToolCalls(db.sequelize, agent, { limit: 10 })).calls;
  expect(record).toMatchObject({ status: 'denied', policy_version: null, reason: null });
});

test('when the migration is reverted, then exactly its two columns go, and applying it again brings them back', async () => {
  // The migrations after it first, so that what goes with this one alone is compared.
  const later = readdirSync(join(__dirname, '../../migrations'))
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .filter((f) => f > MIGRATION);
  if (later.length > 0) await migrateDown(db.sequelize, { to: later[0]! });
  const before = await db.sequelize.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'tool_calls' ORDER BY 1`,
    { type: QueryTypes.SELECT },
  );
  expect(await migrateDown(db.sequelize, { step: 1 })).toEqual([MIGRATION]);
  const after = await db.sequelize.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'tool_calls' ORDER BY 1`,
    { type: QueryTypes.SELECT },
  );
  expect(after.map((c) => c.column_name)).toEqual(
    before.map((c) => c.column_name).filter((name) => name !== 'policy_version' && name !== 'reason'),
  );
  await migrateUp(db.sequelize);
  expect((await decisionColumns(db.sequelize)).map((c) => c.column_name)).toEqual(['policy_version', 'reason']);
});
