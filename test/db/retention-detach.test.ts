// The retention takes a partition out of its table with DETACH PARTITION ... CONCURRENTLY: readers
// and writers of the table go on while it waits for the queries that still read it, a wait that runs
// out leaves the detach pending for the next sweep to finish, and a partition found to hold what is
// still under way once detached is attached back, never dropped.
import { QueryTypes, type Sequelize } from 'sequelize';
import { dedicatedClient } from '../../src/db/dedicated-client';
import { dropExpiredPartitions } from '../../src/db/partitions';

/** What the sweep says keeps a partition whose detach waits. */
const DETACH_PENDING = 'a detach that waits for queries still reading the table';
import { createTestDatabase, type TestDatabase } from '../support/database';

let db: TestDatabase;
let sql: Sequelize;

const all = <T extends object>(query: string) => sql.query<T>(query, { type: QueryTypes.SELECT });
const partitions = async (table: string) =>
  (await all<{ name: string }>(`SELECT partition::text AS name FROM toolgate_partitions('${table}') ORDER BY hi`)).map((p) => p.name);
const month = (n: number) => `date_trunc('month', now(), 'UTC') - interval '${n} months' + interval '9 days'`;
const oldCall = (n: number) =>
  `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, created_at) VALUES (902, 'lookup', 'lookup', 'success', 'sender', ${month(n)})`;

/** Makes again the old months an earlier test's sweep dropped. */
const remake = () => sql.query(`SELECT toolgate_make_partitions('tool_calls', now() - interval '8 months', now(), 'month')`);
/** The partition that holds the record that `where` finds. */
const partitionOf = async (where: string) =>
  (await all<{ name: string }>(`SELECT tableoid::regclass::text AS name FROM tool_calls WHERE ${where} LIMIT 1`))[0]!.name;

async function openReader() {
  const client = dedicatedClient(sql);
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT count(*) FROM tool_calls');
  return client;
}

beforeAll(async () => {
  db = await createTestDatabase();
  sql = db.sequelize;
  for (const table of ['tool_calls', 'agent_runs', 'cap_hits']) {
    await sql.query(`ALTER TABLE ${table} DETACH PARTITION ${table}_legacy; DROP TABLE ${table}_legacy;
                     SELECT toolgate_make_partitions('${table}', now() - interval '8 months', now() + interval '2 months', 'month')`);
  }
  await sql.query(`INSERT INTO agents (id, name) VALUES (902, 'Desk');`);
});
afterAll(() => db.drop());

test('when a transaction holds a read of the records open, then a writer goes on while the sweep waits, and the sweep drops the partition once the read ends', async () => {
  await sql.query(oldCall(8));
  const oldest = await partitionOf(`created_at < ${month(7)}`);
  const reader = await openReader();
  const sweep = dropExpiredPartitions(sql, 90, { waitMs: 30_000 });
  let swept = false;
  void sweep.then(() => (swept = true));
  await new Promise((resolve) => setTimeout(resolve, 500));
  // A writer and a new reader of the table, each bounded: a lock queued behind an ACCESS EXCLUSIVE would fail them.
  const writer = dedicatedClient(sql);
  await writer.connect();
  try {
    await writer.query(`SET lock_timeout = 2000`);
    await writer.query(
      `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run) VALUES (902, 'lookup', 'lookup', 'success', 'sender')`,
    );
    const read = await writer.query(`SELECT count(*)::int AS n FROM tool_calls WHERE agent_id = 902`);
    expect(read.rows[0].n).toBeGreaterThanOrEqual(1);
  } finally {
    await writer.end();
  }
  expect(swept).toBe(false);
  await reader.query('COMMIT');
  await reader.end();
  const result = await sweep;
  expect(result.dropped).toContain(oldest);
  expect(await partitions('tool_calls')).not.toContain(oldest);
  expect(await all(`SELECT 1 FROM pg_class WHERE relname = '${oldest}'`)).toEqual([]);
});

test('when the wait for the readers runs out, then the detach is left pending and reported, and the next sweep finishes it and drops the table', async () => {
  await remake();
  await sql.query(oldCall(8));
  await sql.query(oldCall(7));
  const [oldest, next] = (await partitions('tool_calls')) as [string, string];
  const reader = await openReader();
  let first;
  try {
    first = await dropExpiredPartitions(sql, 90, { waitMs: 300 });
  } finally {
    await reader.query('COMMIT');
    await reader.end();
  }
  expect(first.kept).toContainEqual({ partition: oldest, holds: DETACH_PENDING });
  // A table takes one pending detach at a time: its next partition waits for the next sweep.
  expect(first.dropped).not.toContain(next);
  const [pending] = await all<{ pending: boolean }>(
    `SELECT inhdetachpending AS pending FROM pg_inherits WHERE inhrelid = '${oldest}'::regclass`,
  );
  expect(pending).toEqual({ pending: true });
  // Meanwhile the table's own queries no longer read the pending partition.
  const [count] = await all<{ n: string }>(`SELECT count(*) AS n FROM tool_calls WHERE created_at < ${month(7)}`);
  expect(count).toEqual({ n: '0' });
  const second = await dropExpiredPartitions(sql, 90, { waitMs: 5_000 });
  expect(second.dropped).toEqual(expect.arrayContaining([oldest, next]));
  expect(await all(`SELECT 1 FROM pg_class WHERE relname IN ('${oldest}', '${next}')`)).toEqual([]);
  expect(await all(`SELECT 1 FROM toolgate_retired_partitions`)).toEqual([]);
});

test('when a partition holds a pending approval, then the sweep keeps it, attached, and starts no detach', async () => {
  await remake();
  await sql.query(`
    INSERT INTO approval_requests (id, agent_id, attachment_id, tool_id, input, input_digest, scope, run, routing_key, expires_at, code, created_at)
      VALUES (911, 902, 1, 'lookup', '{}', repeat('c', 32), 'sender:mara@thescoop.com', 'sender', 'mara@thescoop.com', now() + interval '1 year', 'ABCDEF21', ${month(6)});
    INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, approval_request_id, created_at)
      VALUES (902, 'lookup', 'lookup', 'pending_approval', 'sender', 911, ${month(6)});`);
  const holding = await partitionOf('approval_request_id = 911');
  const result = await dropExpiredPartitions(sql, 90);
  expect(result.kept).toContainEqual({ partition: holding, holds: 'a pending approval' });
  expect(await partitions('tool_calls')).toContain(holding);
  expect(await all(`SELECT 1 FROM toolgate_retired_partitions`)).toEqual([]);
});

test('when a detached partition is found to hold a pending approval, then it is attached back with its range and kept', async () => {
  const holding = await partitionOf('approval_request_id = 911');
  const [range] = await all<{ lo: Date; hi: Date }>(
    `SELECT lo, hi FROM toolgate_partitions('tool_calls') WHERE partition = '${holding}'::regclass`,
  );
  // As a sweep stopped after its detach would leave it.
  await sql.query(
    `INSERT INTO toolgate_retired_partitions (partition, parent, name, lo, hi) VALUES ('${holding}'::regclass, 'tool_calls', :name, :lo, :hi)`,
    {
      replacements: { name: holding, lo: range!.lo, hi: range!.hi },
    },
  );
  await sql.query(`ALTER TABLE tool_calls DETACH PARTITION ${holding} CONCURRENTLY`);
  const result = await dropExpiredPartitions(sql, 90);
  expect(result.kept).toContainEqual({ partition: holding, holds: 'a pending approval' });
  expect(await partitions('tool_calls')).toContain(holding);
  const [request] = await all<{ n: string }>(`SELECT count(*) AS n FROM tool_calls WHERE approval_request_id = 911`);
  expect(request).toEqual({ n: '1' });
  expect(await all(`SELECT 1 FROM toolgate_retired_partitions`)).toEqual([]);
});

test('when a sweep stopped after a detach and before the drop, then the next sweep drops the detached table, with no retention needed', async () => {
  await sql.query(`UPDATE approval_requests SET status = 'denied' WHERE id = 911`);
  const oldest = await partitionOf('approval_request_id = 911');
  const [range] = await all<{ lo: Date; hi: Date }>(
    `SELECT lo, hi FROM toolgate_partitions('tool_calls') WHERE partition = '${oldest}'::regclass`,
  );
  await sql.query(
    `INSERT INTO toolgate_retired_partitions (partition, parent, name, lo, hi) VALUES ('${oldest}'::regclass, 'tool_calls', :name, :lo, :hi)`,
    {
      replacements: { name: oldest, lo: range!.lo, hi: range!.hi },
    },
  );
  await sql.query(`ALTER TABLE tool_calls DETACH PARTITION ${oldest}`);
  const result = await dropExpiredPartitions(sql, null);
  expect(result.dropped).toEqual([oldest]);
  expect(await all(`SELECT 1 FROM pg_class WHERE relname = '${oldest}'`)).toEqual([]);
});

test("when another instance's sweep holds the retention's lock, then this sweep leaves the partitions to it", async () => {
  await remake();
  await sql.query(oldCall(8));
  const oldest = (await partitions('tool_calls'))[0]!;
  const other = dedicatedClient(sql);
  await other.connect();
  try {
    await other.query(`SELECT pg_advisory_lock(7415926535898)`);
    expect(await dropExpiredPartitions(sql, 90)).toEqual({ dropped: [], kept: [] });
    expect(await partitions('tool_calls')).toContain(oldest);
  } finally {
    await other.end();
  }
  expect((await dropExpiredPartitions(sql, 90)).dropped).toContain(oldest);
});

test('when a sweep stopped after dropping some of a detached table’s indexes, then the next sweep drops the rest and the table', async () => {
  await remake();
  await sql.query(oldCall(7));
  const oldest = await partitionOf(`created_at < now() - interval '6 months' AND agent_id = 902`);
  const [range] = await all<{ lo: Date; hi: Date }>(
    `SELECT lo, hi FROM toolgate_partitions('tool_calls') WHERE partition = '${oldest}'::regclass`,
  );
  await sql.query(
    `INSERT INTO toolgate_retired_partitions (partition, parent, name, lo, hi) VALUES ('${oldest}'::regclass, 'tool_calls', :name, :lo, :hi)`,
    { replacements: { name: oldest, lo: range!.lo, hi: range!.hi } },
  );
  await sql.query(`ALTER TABLE tool_calls DETACH PARTITION ${oldest}`);
  // As the drop leaves it between its transactions: the primary key and one index gone, the rest not.
  const [index] = await all<{ name: string }>(
    `SELECT indexrelid::regclass::text AS name FROM pg_index i WHERE indrelid = '${oldest}'::regclass
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid) LIMIT 1`,
  );
  await sql.query(`ALTER TABLE ${oldest} DROP CONSTRAINT ${oldest}_pkey; DROP INDEX ${index!.name}`);
  const result = await dropExpiredPartitions(sql, null);
  expect(result.dropped).toEqual([oldest]);
  expect(await all(`SELECT 1 FROM pg_class WHERE relname LIKE '${oldest}%'`)).toEqual([]);
  expect(await all(`SELECT 1 FROM toolgate_retired_partitions`)).toEqual([]);
});
