// Reads the decision log (SEMANTICS §16): the entries that the trigger of migration
// 20261205000301 writes beside each tool-call record once it has its decision or outcome, oldest
// first from a cursor. A read fixes where it ends before it gives anything: the entries past the
// cursor whose writing transaction is older than every transaction still running, at most `limit`
// of them. All of those transactions have ended, so no entry can still commit behind that end, and
// the next read, from there, misses none and gives none twice. The entries up to the end are then
// read in batches (keyset on the same order), so a read holds one batch in memory, however long.
//
// With a retention (TOOLGATE_RETENTION), trimDecisionLog removes the oldest entries in log order and
// moves the horizon (decision_log_horizon, migration 20261207000002) past them in the same
// transaction: every entry up to the horizon is gone, every one past it kept. A read from before
// the horizon is refused (410 cursor_expired), and so is a read the trimming overtakes midway (cut
// off), so no reader is given a gap as if it were the whole log.
import { QueryTypes, type Sequelize } from 'sequelize';
import { z } from 'zod';
import { encodeCursor, LOG_START, type DecisionCursor } from '../core/decision-cursor';
import { CursorExpiredError } from '../errors';
import { TOOL_CALL_VIEW_COLUMNS, toolCallView, toolCallViewSchema, type ToolCallRow } from './tool-calls';

/** One line of the log: the record as GET /agents/:id/tool-calls gives it, its agent, and the entry's own fields. */
export const decisionLogLineSchema = toolCallViewSchema.extend({
  agent_id: z.number().int(),
  event: z
    .enum(['decided', 'completed', 'interrupted'])
    .describe(
      'decided: written complete (denied, skipped, pending_approval); completed: an execution ended; interrupted: its instance stopped',
    ),
  logged_at: z.string().describe('ISO 8601, UTC: when the entry was written'),
  cursor: z.string().describe('where a read goes on from after this line (as the Toolgate-Cursor header of a read that ended here)'),
});
export type DecisionLogEntry = z.output<typeof decisionLogLineSchema>;
/** What an entry logs: a record written complete (a refusal, a skip, a call filed), an execution's outcome, or its interruption. */
export type DecisionEvent = DecisionLogEntry['event'];

export interface DecisionRead {
  /** Where this read ends: the cursor the next read starts from (the one given, when there was nothing new). */
  end: DecisionCursor;
  /** The entries up to `end`, oldest first, a batch at a time. */
  batches(): AsyncGenerator<DecisionLogEntry[]>;
}

const DECISION_BATCH = 1000;

const AFTER = '(l.xact_id, l.position) > ($1::xid8, $2::bigint)';

// The newest of the first `limit` entries past the cursor that every running transaction is younger than
// (ordered by the columns, not by their text: '999' sorts after '1000').
const END = `
  SELECT first.xact_id::text AS xact, first.position::text AS position FROM (
    SELECT l.xact_id, l.position FROM decision_log l
     WHERE ${AFTER} AND l.xact_id < pg_snapshot_xmin(pg_current_snapshot())
     ORDER BY l.xact_id, l.position LIMIT $3
  ) first ORDER BY first.xact_id DESC, first.position DESC LIMIT 1`;

// The batch is taken from the log's index first, and only its entries joined to their records. It
// reads the horizon in the same statement, so in one snapshot: a horizon past the batch's start
// means entries after it were removed since the read began (one row with no entry when the batch
// is empty, so an overtaken read is told even when nothing is left of it).
const BATCH = `
  SELECT h.overtaken, b.*
    FROM (SELECT ($1::xid8, $2::bigint) < (xact_id, position) AS overtaken FROM decision_log_horizon) h
    LEFT JOIN LATERAL (
      SELECT l.xact_id::text AS log_xact, l.position::text AS log_position, l.event AS log_event, l.logged_at AS log_logged_at,
             t.agent_id, ${TOOL_CALL_VIEW_COLUMNS.map((c) => `t.${c}`).join(', ')}
        FROM (SELECT * FROM decision_log l
               WHERE ${AFTER} AND (l.xact_id, l.position) <= ($3::xid8, $4::bigint)
               ORDER BY l.xact_id, l.position LIMIT $5) l
        LEFT JOIN tool_calls t ON t.id = l.tool_call_id
    ) b ON true
   ORDER BY b.log_xact::xid8, b.log_position::bigint`;

interface BatchRow extends ToolCallRow {
  overtaken: boolean;
  /** null on the one row of an empty batch. */
  log_xact: string | null;
  log_position: string;
  log_event: DecisionEvent;
  log_logged_at: Date;
  agent_id: number;
}

/** Where the log starts: just after the newest entry the retention removed (the very start when none was). */
export async function logStart(sequelize: Sequelize): Promise<DecisionCursor> {
  const [row] = await sequelize.query<DecisionCursor>(
    'SELECT xact_id::text AS xact, position::text AS position FROM decision_log_horizon',
    { type: QueryTypes.SELECT },
  );
  return row ?? LOG_START;
}

/**
 * Opens a read of at most `limit` entries after `after` (null: from where the log starts). The end
 * is read here, so a database that cannot be reached fails the read before anything is given, and
 * a cursor from before the horizon is refused (CursorExpiredError) before anything is read;
 * `batches` reads the entries.
 */
export async function readDecisionLog(
  sequelize: Sequelize,
  after: DecisionCursor | null,
  limit: number,
  batchSize: number = DECISION_BATCH,
): Promise<DecisionRead> {
  const start = await logStart(sequelize);
  if (after !== null && before(after, start)) throw new CursorExpiredError(encodeCursor(start));
  const from = after ?? start;
  const [last] = await sequelize.query<DecisionCursor>(END, { bind: [from.xact, from.position, limit], type: QueryTypes.SELECT });
  const end = last ?? from;
  return { end, batches: () => entriesUpTo(sequelize, from, end, batchSize) };
}

/** Whether position a comes before b in the log's order. */
function before(a: DecisionCursor, b: DecisionCursor): boolean {
  const [ax, bx] = [BigInt(a.xact), BigInt(b.xact)];
  return ax < bx || (ax === bx && BigInt(a.position) < BigInt(b.position));
}

async function* entriesUpTo(
  sequelize: Sequelize,
  after: DecisionCursor,
  end: DecisionCursor,
  batchSize: number,
): AsyncGenerator<DecisionLogEntry[]> {
  let from = after;
  while (from.xact !== end.xact || from.position !== end.position) {
    const found = await sequelize.query<BatchRow>(BATCH, {
      bind: [from.xact, from.position, end.xact, end.position, batchSize],
      type: QueryTypes.SELECT,
    });
    // Thrown, the read is cut off (the connection dropped): the next read from the same cursor is told.
    if (found[0]?.overtaken === true) throw new CursorExpiredError(encodeCursor(await logStart(sequelize)));
    const rows = found.filter((row): row is BatchRow & { log_xact: string } => row.log_xact !== null);
    const last = rows[rows.length - 1];
    if (last === undefined) return;
    from = { xact: last.log_xact, position: last.log_position };
    // An entry whose record is gone (deleted with its agent) is passed over; the cursor still moves past it.
    yield rows.filter((row) => row.id !== null).map(entryOf);
  }
}

function entryOf(row: BatchRow & { log_xact: string }): DecisionLogEntry {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { overtaken, log_xact, log_position, log_event, log_logged_at, agent_id, ...record } = row;
  return {
    ...toolCallView(record),
    agent_id,
    event: log_event,
    logged_at: log_logged_at.toISOString(),
    cursor: encodeCursor({ xact: log_xact, position: log_position }),
  };
}

/** The entries looked at in one transaction of trimDecisionLog: each batch's locks are short. */
const TRIM_BATCH = 10_000;

/**
 * Removes the entries logged more than `keepDays` ago, oldest first in the log's order, a batch at
 * a time (each its own transaction), and moves the horizon past them; how many went. It stops at
 * the first entry that is not that old, even when later ones are (a transaction's entries carry its
 * start time, so the order of logged_at and of the log differ a little): the horizon so stays a
 * position, everything before it gone and everything after it kept. Only entries of transactions
 * older than every one still running are looked at: one that commits later lands past the horizon.
 */
export async function trimDecisionLog(sequelize: Sequelize, keepDays: number, batchSize: number = TRIM_BATCH): Promise<number> {
  let removed = 0;
  for (;;) {
    const gone = await sequelize.transaction(async (transaction) => {
      // Held to the transaction's end: two instances' sweeps trim one after the other, never the same entries twice.
      const [horizon] = await sequelize.query<DecisionCursor>(
        'SELECT xact_id::text AS xact, position::text AS position FROM decision_log_horizon FOR UPDATE',
        { type: QueryTypes.SELECT, transaction },
      );
      if (horizon === undefined) return 0;
      const batch = await sequelize.query<DecisionCursor & { old: boolean }>(
        `SELECT l.xact_id::text AS xact, l.position::text AS position, l.logged_at < now() - $3::integer * interval '1 day' AS old
           FROM decision_log l
          WHERE (l.xact_id, l.position) > ($1::xid8, $2::bigint) AND l.xact_id < pg_snapshot_xmin(pg_current_snapshot())
          ORDER BY l.xact_id, l.position LIMIT $4`,
        { bind: [horizon.xact, horizon.position, keepDays, batchSize], type: QueryTypes.SELECT, transaction },
      );
      const young = batch.findIndex((entry) => !entry.old);
      const old = young === -1 ? batch : batch.slice(0, young);
      const last = old[old.length - 1];
      if (last === undefined) return 0;
      const [deleted] = await sequelize.query<{ n: number }>(
        `WITH gone AS (
           DELETE FROM decision_log l WHERE (l.xact_id, l.position) > ($1::xid8, $2::bigint) AND (l.xact_id, l.position) <= ($3::xid8, $4::bigint)
           RETURNING 1)
         SELECT count(*)::integer AS n FROM gone`,
        { bind: [horizon.xact, horizon.position, last.xact, last.position], type: QueryTypes.SELECT, transaction },
      );
      await sequelize.query('UPDATE decision_log_horizon SET xact_id = $1::xid8, position = $2::bigint, trimmed_at = now()', {
        bind: [last.xact, last.position],
        transaction,
      });
      return { count: deleted?.n ?? 0, more: young === -1 && batch.length === batchSize };
    });
    if (gone === 0) return removed;
    removed += gone.count;
    if (!gone.more) return removed;
  }
}
