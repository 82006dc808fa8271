// Reads the decision log (SEMANTICS §16): the entries that the trigger of migration
// 20261205000301 writes beside each tool-call record once it has its decision or outcome, oldest
// first from a cursor. A read fixes where it ends before it gives anything: the entries past the
// cursor whose writing transaction is older than every transaction still running, at most `limit`
// of them. All of those transactions have ended, so no entry can still commit behind that end, and
// the next read, from there, misses none and gives none twice. The entries up to the end are then
// read in batches (keyset on the same order), so a read holds one batch in memory, however long.
import { QueryTypes, type Sequelize } from 'sequelize';
import { encodeCursor, type DecisionCursor } from '../core/decision-cursor';
import { TOOL_CALL_VIEW_COLUMNS, toolCallView, type ToolCallRow, type ToolCallView } from './tool-calls';

/** What an entry logs: a record written complete (a refusal, a skip, a call filed), an execution's outcome, or its interruption. */
export type DecisionEvent = 'decided' | 'completed' | 'interrupted';

/** One line of the log: the record as GET /agents/:id/tool-calls gives it, its agent, and the entry's own fields. */
export interface DecisionLogEntry extends ToolCallView {
  agent_id: number;
  event: DecisionEvent;
  logged_at: string;
  /** Where a read goes on from after this entry. */
  cursor: string;
}

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

// The batch is taken from the log's index first, and only its entries joined to their records.
const BATCH = `
  SELECT l.xact_id::text AS log_xact, l.position::text AS log_position, l.event AS log_event, l.logged_at AS log_logged_at,
         t.agent_id, ${TOOL_CALL_VIEW_COLUMNS.map((c) => `t.${c}`).join(', ')}
    FROM (SELECT * FROM decision_log l
           WHERE ${AFTER} AND (l.xact_id, l.position) <= ($3::xid8, $4::bigint)
           ORDER BY l.xact_id, l.position LIMIT $5) l
    LEFT JOIN tool_calls t ON t.id = l.tool_call_id
   ORDER BY l.xact_id, l.position`;

interface BatchRow extends ToolCallRow {
  log_xact: string;
  log_position: string;
  log_event: DecisionEvent;
  log_logged_at: Date;
  agent_id: number;
}

/**
 * Opens a read of at most `limit` entries after `after`. The end is read here, so a database that
 * cannot be reached fails the read before anything is given; `batches` reads the entries.
 */
export async function readDecisionLog(
  sequelize: Sequelize,
  after: DecisionCursor,
  limit: number,
  batchSize: number = DECISION_BATCH,
): Promise<DecisionRead> {
  const [last] = await sequelize.query<DecisionCursor>(END, { bind: [after.xact, after.position, limit], type: QueryTypes.SELECT });
  const end = last ?? after;
  return { end, batches: () => entriesUpTo(sequelize, after, end, batchSize) };
}

async function* entriesUpTo(
  sequelize: Sequelize,
  after: DecisionCursor,
  end: DecisionCursor,
  batchSize: number,
): AsyncGenerator<DecisionLogEntry[]> {
  let from = after;
  while (from.xact !== end.xact || from.position !== end.position) {
    const rows = await sequelize.query<BatchRow>(BATCH, {
      bind: [from.xact, from.position, end.xact, end.position, batchSize],
      type: QueryTypes.SELECT,
    });
    const last = rows[rows.length - 1];
    if (last === undefined) return;
    from = { xact: last.log_xact, position: last.log_position };
    // An entry whose record is gone (deleted with its agent) is passed over; the cursor still moves past it.
    yield rows.filter((row) => row.id !== null).map(entryOf);
  }
}

function entryOf(row: BatchRow): DecisionLogEntry {
  const { log_xact, log_position, log_event, log_logged_at, agent_id, ...record } = row;
  return {
    ...toolCallView(record),
    agent_id,
    event: log_event,
    logged_at: log_logged_at.toISOString(),
    cursor: encodeCursor({ xact: log_xact, position: log_position }),
  };
}
