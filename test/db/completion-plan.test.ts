// A record's completion finds it by its primary key, whatever the statistics say: the partial index
// of started records (the sweeper's) keeps an entry for every record completed since the last
// vacuum, and a completion that read it would slow with every call until the next vacuum.
import { QueryTypes } from 'sequelize';
import { completeToolCall } from '../../src/services/tool-calls';
import { createTestDatabase, type TestDatabase } from '../support/database';

let db: TestDatabase;

beforeEach(async () => {
  // One connection, so the named statement the completion prepared is there for EXPLAIN.
  db = await createTestDatabase({ pool: { max: 1 } });
});
afterEach(() => db.drop());

/** 3,000 records written as dispatch writes them, all but the last two completed; their ids. */
async function completedRecords(): Promise<[string, string]> {
  const [agent] = await db.sequelize.query<{ id: number }>(
    `INSERT INTO agents (name, created_at, updated_at) VALUES ('Plans', now(), now()) RETURNING id`,
    { type: QueryTypes.SELECT },
  );
  await db.sequelize.query(
    `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, instance_id, deadline_at, created_at)
     SELECT :agent, 'noop', 'noop', 'started', 'sender', 'jane@thescoop.com', 0, 'test', now() + interval '1 minute', now()
       FROM generate_series(1, 3000)`,
    { replacements: { agent: agent!.id } },
  );
  const open = await db.sequelize.query<{ id: string }>(`SELECT id FROM tool_calls ORDER BY id DESC LIMIT 2`, { type: QueryTypes.SELECT });
  await db.sequelize.query(`UPDATE tool_calls SET status = 'success' WHERE id < :lowest`, { replacements: { lowest: open[1]!.id } });
  return [open[1]!.id, open[0]!.id];
}

async function completionPlan(id: string): Promise<string> {
  const rows = await db.sequelize.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (COSTS OFF) EXECUTE toolgate_tool_call_complete(${Number(id)}, 'success', 1, NULL)`,
    { type: QueryTypes.SELECT },
  );
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

const STARTED_INDEX = /started_idx|deadline_at_idx/;

test('when the table has no statistics yet, then a completion reads the primary key, not the index of started records', async () => {
  const [first, second] = await completedRecords();
  await completeToolCall(db.sequelize, Number(first), { status: 'success', duration_ms: 1, error: null });
  const plan = await completionPlan(second);
  expect(plan).toMatch(/pkey/);
  expect(plan).not.toMatch(STARTED_INDEX);
});

test('when the table has been analyzed with one record left started, then a completion reads the primary key in its plan for any id as in its own', async () => {
  const [first, second] = await completedRecords();
  await completeToolCall(db.sequelize, Number(first), { status: 'success', duration_ms: 1, error: null });
  // The statistics then count a single started record among thousands: the index of started records looks smallest.
  await db.sequelize.query('ANALYZE tool_calls');
  await completeToolCall(db.sequelize, Number(second), { status: 'success', duration_ms: 1, error: null });
  const custom = await completionPlan(second);
  await db.sequelize.query(`SET plan_cache_mode = force_generic_plan`);
  const generic = await completionPlan(second);
  for (const plan of [custom, generic]) {
    expect(plan).toMatch(/pkey/);
    expect(plan).not.toMatch(STARTED_INDEX);
  }
});

test('when a record is completed, then only a started one changes, once', async () => {
  const [first] = await completedRecords();
  await completeToolCall(db.sequelize, Number(first), { status: 'failure', duration_ms: 7, error: 'boom' });
  await completeToolCall(db.sequelize, Number(first), { status: 'success', duration_ms: 9, error: null });
  const [row] = await db.sequelize.query<{ status: string; duration_ms: number }>(
    `SELECT status, duration_ms FROM tool_calls WHERE id = :id`,
    {
      replacements: { id: first },
      type: QueryTypes.SELECT,
    },
  );
  expect(row).toEqual({ status: 'failure', duration_ms: 7 });
});
