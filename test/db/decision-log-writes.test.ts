// The decision log's cheaper writes (migration 20261207000004): one trigger whose function decides
// what is logged, and one index, the key the log is read by. Each record is logged once, with its
// final status, whoever writes it; down() gives back the two triggers and the position's key.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { QueryTypes, type Sequelize } from 'sequelize';
import { migrateDown, migrateUp } from '../../src/db/migrate';
import { createTestDatabase, type TestDatabase } from '../support/database';

const MIGRATION = '20261207000004-decision-log-cheaper-writes.ts';

let db: TestDatabase;
let agent: number;
beforeAll(async () => {
  db = await createTestDatabase();
  const [row] = await db.sequelize.query<{ id: number }>(`INSERT INTO agents (name) VALUES ('Sundae') RETURNING id`, {
    type: QueryTypes.SELECT,
  });
  agent = row!.id;
});
afterAll(() => db.drop());

interface Shape {
  indexes: string[];
  key: string;
  triggers: string[];
}

/** The log's indexes and key, and the decision log's triggers on tool_calls. */
async function shape(sequelize: Sequelize): Promise<Shape> {
  const [row] = await sequelize.query<Shape>(
    `SELECT (SELECT json_agg(pg_get_indexdef(indexrelid) ORDER BY 1) FROM pg_index WHERE indrelid = 'decision_log'::regclass) AS indexes,
            (SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'decision_log'::regclass AND contype = 'p') AS key,
            (SELECT json_agg(pg_get_triggerdef(oid) ORDER BY tgname) FROM pg_trigger
              WHERE tgrelid = 'tool_calls'::regclass AND tgname LIKE 'toolgate_decision_logged%') AS triggers`,
    { type: QueryTypes.SELECT },
  );
  return row!;
}

/** Writes a record with `status`, returns its id. */
async function write(status: string): Promise<number> {
  const [row] = await db.sequelize.query<{ id: string }>(
    `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run) VALUES (:agent, 'lookup_order', 'lookup_order', :status, 'sender') RETURNING id`,
    { replacements: { agent, status }, type: QueryTypes.SELECT },
  );
  return Number(row!.id);
}

async function entries(id: number): Promise<string[]> {
  const rows = await db.sequelize.query<{ event: string }>(
    `SELECT event FROM decision_log WHERE tool_call_id = :id ORDER BY xact_id, position`,
    {
      replacements: { id },
      type: QueryTypes.SELECT,
    },
  );
  return rows.map((r) => r.event);
}

test('when migrated, then the log has one index, its key (xact_id, position), and tool_calls one trigger for the log', async () => {
  const now = await shape(db.sequelize);
  expect(now.key).toBe('PRIMARY KEY (xact_id, "position")');
  expect(now.indexes).toHaveLength(1);
  expect(now.triggers).toEqual([
    expect.stringMatching(/AFTER INSERT OR UPDATE OF status ON public\.tool_calls FOR EACH ROW EXECUTE FUNCTION/),
  ]);
});

test('when a record is started, completed, then written over again, then it is logged once, when it leaves started', async () => {
  const id = await write('started');
  expect(await entries(id)).toEqual([]);
  await db.sequelize.query(`UPDATE tool_calls SET status = 'success' WHERE id = :id`, { replacements: { id } });
  await db.sequelize.query(`UPDATE tool_calls SET status = 'failure', duration_ms = 3 WHERE id = :id`, { replacements: { id } });
  expect(await entries(id)).toEqual(['completed']);
});

test('when records are written complete or interrupted, then each is logged once with its event', async () => {
  const denied = await write('denied');
  const interrupted = await write('started');
  await db.sequelize.query(`UPDATE tool_calls SET status = 'interrupted' WHERE id = :id`, { replacements: { id: interrupted } });
  expect([await entries(denied), await entries(interrupted)]).toEqual([['decided'], ['interrupted']]);
});

test('when the migration is reverted, then the two triggers and the key of the position come back, and applied again, the one trigger and key', async () => {
  const later = readdirSync(join(__dirname, '../../migrations'))
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .filter((f) => f > MIGRATION);
  if (later.length > 0) await migrateDown(db.sequelize, { to: later[0]! });
  const now = await shape(db.sequelize);
  expect(await migrateDown(db.sequelize, { step: 1 })).toEqual([MIGRATION]);
  const before = await shape(db.sequelize);
  expect(before.key).toBe('PRIMARY KEY ("position")');
  expect(before.indexes).toHaveLength(2);
  expect(before.triggers.map((t) => /TRIGGER (\S+)/.exec(t)![1])).toEqual([
    'toolgate_decision_logged_insert',
    'toolgate_decision_logged_update',
  ]);
  const id = await write('started');
  await db.sequelize.query(`UPDATE tool_calls SET status = 'success' WHERE id = :id`, { replacements: { id } });
  expect(await entries(id)).toEqual(['completed']);
  await migrateUp(db.sequelize);
  expect(await shape(db.sequelize)).toEqual(now);
});
