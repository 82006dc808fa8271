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
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { PartitionUnit } from '../retention-options';
import { quoteIdent } from './quote-ident';

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
    const rows = await sequelize.query<{ name: string; lo: Date | null; hi: Date }>(
      `SELECT c.relname AS name, p.lo, p.hi FROM toolgate_partitions(to_regclass(:table)) p JOIN pg_class c ON c.oid = p.partition ORDER BY p.hi`,
      { replacements: { table }, type: QueryTypes.SELECT },
    );
    for (const r of rows) found.push({ table, name: r.name, lo: r.lo, hi: r.hi });
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

/**
 * Drops the partitions that lie wholly before `keepDays` ago (cap_hits': before every cap's window),
 * unless they hold something under way. keepDays null drops no record partition.
 */
export async function dropExpiredPartitions(sequelize: Sequelize, keepDays: number | null): Promise<RetentionResult> {
  const result: RetentionResult = { dropped: [], kept: [] };
  // The database's clock, which wrote the records' times.
  const [{ now, window_s: longestWindowS }] = (await sequelize.query<{ now: Date; window_s: number }>(
    `SELECT now() AS now, coalesce(max(window_s), 0)::integer AS window_s FROM cap_usage`,
    { type: QueryTypes.SELECT },
  )) as [{ now: Date; window_s: number }];
  const cutoff = keepDays === null ? null : new Date(now.getTime() - keepDays * DAY_MS);
  const capCutoff = new Date(now.getTime() - longestWindowS * 1000);
  for (const partition of await listPartitions(sequelize)) {
    const bound = partition.table === 'cap_hits' ? capCutoff : cutoff;
    if (bound === null || partition.hi.getTime() > bound.getTime()) continue;
    const holds = await heldIn(sequelize, partition);
    if (holds !== null) {
      result.kept.push({ partition: partition.name, holds });
      continue;
    }
    if (partition.table === 'agent_runs') await dropRunKeys(sequelize, partition.name);
    const dropped = await sequelize.transaction(async (transaction) => {
      // The table first, as every query on it takes it before its partitions (the other order could deadlock
      // with one): for a moment, the checks and the drop, which a sweep that would wait long leaves to the next.
      await sequelize.query(`SET LOCAL lock_timeout = '1s'`, { transaction });
      await sequelize.query(`LOCK TABLE ${quoteIdent(partition.table)} IN ACCESS EXCLUSIVE MODE`, { transaction });
      // Checked again under the lock: nothing can have come since.
      const held = await heldIn(sequelize, partition, transaction);
      if (held !== null) return held;
      if (partition.table === 'agent_runs')
        await sequelize.query(`DELETE FROM agent_run_keys k USING ${quoteIdent(partition.name)} r WHERE k.id = r.id`, { transaction });
      await sequelize.query(`DROP TABLE ${quoteIdent(partition.name)}`, { transaction });
      return null;
    });
    if (dropped === null) result.dropped.push(partition.name);
    else result.kept.push({ partition: partition.name, holds: dropped });
  }
  return result;
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
