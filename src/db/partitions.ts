// The record tables' partitions (migration 20261206000001, docs/DECISIONS.md): the sweeper makes the
// ones ahead and, with a retention, drops whole partitions older than it, never one that holds what
// is still under way:
// - tool_calls: a `started` record (its tool may still run), or a `pending_approval` record whose
//   request is pending;
// - agent_runs: an open run, or the run of a pending approval request;
// - cap_hits: a call still inside any cap's window (a cap would let more calls through), whatever
//   the retention: its partitions go once every call they hold has left every window.
// Partitions are found through the tables' own (pg_inherits, by toolgate_partitions()), never by
// name, so no other table of the database is touched. A table that is not partitioned (an adopted
// legacy tool_calls, the host's own) is left whole.
//
// A partition leaves its table by DETACH PARTITION ... CONCURRENTLY, never under an ACCESS EXCLUSIVE
// lock on the table: readers and writers of the table go on while it waits for the queries that
// could still see the partition, and only the detached table is then dropped. The partition is
// written down first (toolgate_retired_partitions, migration 20261207000002), so a sweep stopped
// partway (a detach left "detach pending", a detached table not yet dropped) is finished by the
// next one.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { PartitionUnit } from '../retention-options';
import type { PgClient } from './connect';
import { dedicatedClient } from './dedicated-client';
import { quoteIdent } from './quote-ident';
import { lockKeySql } from './schema';

const DAY_MS = 86_400_000;

export const PARTITIONED_TABLES = ['tool_calls', 'agent_runs', 'cap_hits'] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** How far ahead partitions are made: past the next period's start, so a sweep that fails for a while costs nothing. */
const AHEAD: Record<PartitionUnit, string> = { month: '2 months', day: '7 days' };

/** What is still under way in a partition (%P%, its upper bound %HI%): any row these find keeps it. */
const HELD: Record<PartitionedTable, string> = {
  tool_calls: `SELECT 'a started record' FROM %P% WHERE status = 'started'
               UNION ALL
               SELECT 'a pending approval' FROM approval_requests r JOIN %P% ON p.agent_id = r.agent_id AND p.status = 'pending_approval' AND p.approval_request_id = r.id
                WHERE r.status = 'pending'`,
  agent_runs: `SELECT 'an open run' FROM %P% WHERE completed_at IS NULL
               UNION ALL
               SELECT 'a pending approval' FROM approval_requests r JOIN %P% ON p.id = r.run_id WHERE r.status = 'pending'`,
  // Any counter whose window reaches back into the partition: no row of the partition is read.
  cap_hits: `SELECT 'a call inside a cap window' FROM cap_usage u WHERE clock_timestamp() - u.window_s * interval '1 second' < %HI%`,
};

/** The keys of a run partition's runs, deleted this many at a time before the partition is dropped. */
const KEY_BATCH = 10_000;

export interface Partition {
  table: PartitionedTable;
  name: string;
  /** null: everything before `hi` (the table as it was before it was partitioned). */
  lo: Date | null;
  hi: Date;
  /** A detach that began and did not finish: the table's queries no longer read the partition. */
  pending: boolean;
}

export interface RetentionResult {
  dropped: string[];
  /** Partitions old enough to go that hold what is still under way, with what. */
  kept: { partition: string; holds: string }[];
}

async function isPartitioned(sequelize: Sequelize, table: string): Promise<boolean> {
  const [row] = await sequelize.query<{ kind: string | null }>(
    `SELECT (SELECT relkind::text FROM pg_class WHERE oid = to_regclass(:table)) AS kind`,
    {
      replacements: { table },
      type: QueryTypes.SELECT,
    },
  );
  return row?.kind === 'p';
}

/** The partitions of the partitioned record tables, oldest first. */
export async function listPartitions(sequelize: Sequelize): Promise<Partition[]> {
  const found: Partition[] = [];
  for (const table of PARTITIONED_TABLES) {
    if (!(await isPartitioned(sequelize, table))) continue;
    const rows = await sequelize.query<{ name: string; lo: Date | null; hi: Date; pending: boolean }>(
      `SELECT c.relname AS name, p.lo, p.hi, i.inhdetachpending AS pending
         FROM toolgate_partitions(to_regclass(:table)) p JOIN pg_class c ON c.oid = p.partition JOIN pg_inherits i ON i.inhrelid = p.partition
        ORDER BY p.hi`,
      { replacements: { table }, type: QueryTypes.SELECT },
    );
    for (const r of rows) found.push({ table, name: r.name, lo: r.lo, hi: r.hi, pending: r.pending });
  }
  return found;
}

/** Makes the partitions each table lacks from now to a while ahead; how many it made. */
export async function makePartitionsAhead(sequelize: Sequelize, unit: PartitionUnit): Promise<number> {
  let made = 0;
  for (const table of PARTITIONED_TABLES) {
    if (!(await isPartitioned(sequelize, table))) continue;
    made += await sequelize.transaction(async (transaction) => {
      // Making a partition locks its table for a moment: a sweep that would wait long leaves it to the next.
      await sequelize.query(`SET LOCAL lock_timeout = '2s'`, { transaction });
      const [row] = await sequelize.query<{ made: number }>(
        `SELECT toolgate_make_partitions(to_regclass(:table), now(), now() + interval '${AHEAD[unit]}', :unit) AS made`,
        { replacements: { table, unit }, type: QueryTypes.SELECT, transaction },
      );
      return row?.made ?? 0;
    });
  }
  return made;
}

export interface RetentionOptions {
  /**
   * How long a detach waits for the queries still reading the partition's table (default 10 s):
   * past it the detach is left pending, the table's readers and writers unhindered, and the next
   * sweep finishes it.
   */
  waitMs?: number;
}

/** pg_advisory_lock key for "toolgate retention": one instance's sweep drops partitions at a time. */
const RETENTION_LOCK_KEY = '7415926535898';
const RETENTION_LOCK = lockKeySql('toolgate retention', '$1');

/** What keeps a partition whose detach did not finish in this sweep. */
const DETACH_PENDING = 'a detach that waits for queries still reading the table';

/**
 * Drops the partitions that lie wholly before `keepDays` ago (cap_hits': before every cap's window),
 * unless they hold something under way. keepDays null drops no record partition; a partition an
 * earlier sweep began to drop is finished whatever the retention.
 */
export async function dropExpiredPartitions(
  sequelize: Sequelize,
  keepDays: number | null,
  options: RetentionOptions = {},
): Promise<RetentionResult> {
  // The detaches run on a connection of their own (neither form may run in a transaction block),
  // which holds the retention's lock: another instance sweeping meanwhile leaves the partitions to it.
  const client = dedicatedClient(sequelize, { application_name: 'toolgate retention' });
  client.on('error', () => undefined); // a lost connection fails the statement that used it, and ends the lock
  await client.connect();
  try {
    const locked = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${RETENTION_LOCK}) AS locked`, [
      RETENTION_LOCK_KEY,
    ]);
    if (locked.rows[0]?.locked !== true) return { dropped: [], kept: [] };
    await client.query(`SET lock_timeout = ${Math.max(1, Math.round(options.waitMs ?? 10_000))}`);
    return await dropUnderLock(sequelize, client, keepDays);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function dropUnderLock(sequelize: Sequelize, client: PgClient, keepDays: number | null): Promise<RetentionResult> {
  const result: RetentionResult = { dropped: [], kept: [] };
  await finishRetired(sequelize, client, result);
  // The database's clock, which wrote the records' times.
  const [{ now, window_s: longestWindowS }] = (await sequelize.query<{ now: Date; window_s: number }>(
    `SELECT now() AS now, coalesce(max(window_s), 0)::integer AS window_s FROM cap_usage`,
    { type: QueryTypes.SELECT },
  )) as [{ now: Date; window_s: number }];
  const cutoff = keepDays === null ? null : new Date(now.getTime() - keepDays * DAY_MS);
  const capCutoff = new Date(now.getTime() - longestWindowS * 1000);
  const found = await listPartitions(sequelize);
  // A table takes one pending detach at a time: while one waits (finishRetired said so already),
  // its other partitions wait for a later sweep.
  const waiting = new Set(found.filter((p) => p.pending).map((p) => p.table));
  for (const partition of found) {
    if (waiting.has(partition.table)) continue;
    const bound = partition.table === 'cap_hits' ? capCutoff : cutoff;
    if (bound === null || partition.hi.getTime() > bound.getTime()) continue;
    // Checked before the detach, and again on the detached table. Nothing can come into an old
    // partition between the two: records, runs and requests are written with now() (the column's
    // default), which lies in the current partition, never in one wholly before the retention, and
    // what an old partition holds only ever ends (a started call finishes, a request is decided or
    // expires, a run closes), never starts again. The second check is for a host's own SQL that
    // wrote an old time, and for a cap made meanwhile whose window reaches back.
    const holds = await heldIn(sequelize, partition);
    if (holds !== null) {
      result.kept.push({ partition: partition.name, holds });
      continue;
    }
    if (partition.table === 'agent_runs') await dropRunKeys(sequelize, partition.name);
    const [retired] = await sequelize.query<{ oid: string }>(
      `INSERT INTO toolgate_retired_partitions (partition, parent, name, lo, hi)
       VALUES (to_regclass(:qualified)::oid, :table, :name, :lo, :hi)
       ON CONFLICT (partition) DO UPDATE SET detached_at = now() RETURNING partition::text AS oid`,
      {
        replacements: {
          qualified: quoteIdent(partition.name),
          table: partition.table,
          name: partition.name,
          lo: partition.lo,
          hi: partition.hi,
        },
        type: QueryTypes.SELECT,
      },
    );
    if (!(await detach(client, partition.table, partition.name, 'CONCURRENTLY'))) {
      const state = await stateOf(sequelize, retired!.oid);
      if (state === 'pending') {
        result.kept.push({ partition: partition.name, holds: DETACH_PENDING });
        waiting.add(partition.table);
      } else if (state === 'attached') await forget(sequelize, retired!.oid);
      continue;
    }
    await dropDetached(
      sequelize,
      { oid: retired!.oid, table: partition.table, name: partition.name, lo: partition.lo, hi: partition.hi },
      result,
    );
  }
  return result;
}

interface Retired {
  oid: string;
  table: PartitionedTable;
  name: string;
  lo: Date | null;
  hi: Date;
}

/**
 * The partitions an earlier sweep began to drop: a detach left pending is finished (FINALIZE), a
 * detached table dropped; one that is attached again, or gone, is only forgotten.
 */
async function finishRetired(sequelize: Sequelize, client: PgClient, result: RetentionResult): Promise<void> {
  const rows = await sequelize.query<Retired & { state: RetiredState }>(
    `SELECT r.partition::text AS oid, r.parent AS "table", r.name, r.lo, r.hi, ${STATE} AS state
       FROM toolgate_retired_partitions r ORDER BY r.detached_at`,
    { type: QueryTypes.SELECT },
  );
  for (const row of rows) {
    if (!(PARTITIONED_TABLES as readonly string[]).includes(row.table)) continue;
    if (row.state === 'gone' || row.state === 'attached') {
      await forget(sequelize, row.oid);
      continue;
    }
    if (row.state === 'pending' && !(await detach(client, row.table, row.name, 'FINALIZE'))) {
      result.kept.push({ partition: row.name, holds: DETACH_PENDING });
      continue;
    }
    await dropDetached(sequelize, row, result);
  }
}

/** The next of a detached table's indexes to drop, as its statement: a constraint's index goes with its constraint. */
const NEXT_INDEX_DROP = `SELECT coalesce('ALTER TABLE ' || :table || ' DROP CONSTRAINT ' || quote_ident(c.conname),
                                 'DROP INDEX ' || i.indexrelid::regclass::text) AS sql
                          FROM pg_index i LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.conrelid = i.indrelid
                         WHERE i.indrelid = to_regclass(:table) LIMIT 1`;

/**
 * Drops a detached partition once it is checked again to hold nothing under way; one that does is
 * attached back with its range (the CHECK the detach left proves the range, so no row is read).
 * Its rows left the record table with the detach; what is left is removing its files, which a
 * COMMIT does and which takes the longer the larger they are (docs/PERFORMANCE.md, "Retention"):
 * so its indexes go first, one per transaction, then the table, and no transaction removes more
 * than one relation's files.
 */
async function dropDetached(sequelize: Sequelize, retired: Retired, result: RetentionResult): Promise<void> {
  const partition: Partition = { table: retired.table, name: retired.name, lo: retired.lo, hi: retired.hi, pending: false };
  const table = quoteIdent(retired.name);
  const locked = async (transaction: Transaction) => {
    // Only the detached table is locked: no query of the record table reads it any more.
    await sequelize.query(`SET LOCAL lock_timeout = '1s'`, { transaction });
    await sequelize.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`, { transaction });
  };
  // Checked once, before anything of the table goes. Nothing can come into it afterwards: no write
  // to the record tables reaches a detached table, and what it holds only ever ends.
  const held = await sequelize.transaction(async (transaction) => {
    await locked(transaction);
    return heldIn(sequelize, partition, transaction);
  });
  if (held !== null) {
    const from = retired.lo === null ? 'MINVALUE' : `'${retired.lo.toISOString()}'`;
    await sequelize.query(
      `ALTER TABLE ${quoteIdent(retired.table)} ATTACH PARTITION ${table} FOR VALUES FROM (${from}) TO ('${retired.hi.toISOString()}')`,
    );
    await forget(sequelize, retired.oid);
    result.kept.push({ partition: retired.name, holds: held });
    return;
  }
  for (;;) {
    const dropped = await sequelize.transaction(async (transaction) => {
      await locked(transaction);
      const [next] = await sequelize.query<{ sql: string }>(NEXT_INDEX_DROP, {
        replacements: { table },
        type: QueryTypes.SELECT,
        transaction,
      });
      if (next === undefined) return false;
      await sequelize.query(next.sql, { transaction });
      return true;
    });
    if (!dropped) break;
  }
  await sequelize.transaction(async (transaction) => {
    await locked(transaction);
    if (retired.table === 'agent_runs')
      await sequelize.query(`DELETE FROM agent_run_keys k USING ${table} r WHERE k.id = r.id`, { transaction });
    await sequelize.query(`DROP TABLE ${table}`, { transaction });
    await sequelize.query(`DELETE FROM toolgate_retired_partitions WHERE partition = :oid::oid`, {
      replacements: { oid: retired.oid },
      transaction,
    });
  });
  result.dropped.push(retired.name);
}

/**
 * DETACH PARTITION CONCURRENTLY (or FINALIZE, which ends one left pending), on the retention's own
 * connection, whose lock_timeout bounds how long it waits for queries still reading the table.
 * False when it did not finish: the wait ran out, or another detach of the table is under way.
 */
async function detach(client: PgClient, table: string, partition: string, how: 'CONCURRENTLY' | 'FINALIZE'): Promise<boolean> {
  try {
    await client.query(`ALTER TABLE ${quoteIdent(table)} DETACH PARTITION ${quoteIdent(partition)} ${how}`);
    return true;
  } catch (err) {
    // 55P03: the wait ran out; 57014: cancelled; 55000: another partition's detach is pending, or
    // this one's already is. Each leaves the detach to a later sweep.
    const code = (err as { code?: string }).code;
    if (code === '55P03' || code === '57014' || code === '55000') return false;
    throw err;
  }
}

type RetiredState = 'gone' | 'attached' | 'pending' | 'detached';

/** Where a retired partition (r.partition) stands: gone, still attached, its detach pending, or detached. */
const STATE = `(SELECT CASE WHEN c.oid IS NULL THEN 'gone'
                            WHEN i.inhrelid IS NULL THEN 'detached'
                            WHEN i.inhdetachpending THEN 'pending'
                            ELSE 'attached' END
                  FROM (SELECT r.partition) x
                  LEFT JOIN pg_class c ON c.oid = x.partition
                  LEFT JOIN pg_inherits i ON i.inhrelid = x.partition)`;

async function stateOf(sequelize: Sequelize, oid: string): Promise<RetiredState> {
  const [row] = await sequelize.query<{ state: RetiredState }>(`SELECT ${STATE} AS state FROM (SELECT :oid::oid AS partition) r`, {
    replacements: { oid },
    type: QueryTypes.SELECT,
  });
  return row?.state ?? 'gone';
}

async function forget(sequelize: Sequelize, oid: string): Promise<void> {
  await sequelize.query(`DELETE FROM toolgate_retired_partitions WHERE partition = :oid::oid`, { replacements: { oid } });
}

async function heldIn(sequelize: Sequelize, partition: Partition, transaction?: Transaction): Promise<string | null> {
  const sql = HELD[partition.table]
    .replaceAll('%P%', `${quoteIdent(partition.name)} p`)
    .replaceAll('%HI%', `'${partition.hi.toISOString()}'::timestamptz`);
  const [row] = await sequelize.query<{ holds: string }>(`SELECT holds FROM (${sql}) AS h(holds) LIMIT 1`, {
    type: QueryTypes.SELECT,
    transaction,
  });
  return row?.holds ?? null;
}

/**
 * The keys of a run partition's runs, deleted a batch at a time, each in its own transaction (their
 * message ids go with them, and requests that named them no longer do), so no lock is held long.
 * Only partitions that hold nothing under way get here: no key of a run still in use is taken.
 */
async function dropRunKeys(sequelize: Sequelize, partition: string): Promise<void> {
  for (;;) {
    const gone = await sequelize.query(
      `DELETE FROM agent_run_keys WHERE id IN (SELECT r.id FROM ${quoteIdent(partition)} r JOIN agent_run_keys k ON k.id = r.id LIMIT ${KEY_BATCH}) RETURNING id`,
      { type: QueryTypes.SELECT },
    );
    if (gone.length < KEY_BATCH) return;
  }
}
