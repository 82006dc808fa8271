// Writes and reads tool-call records (SEMANTICS §8): every execution, refusal and skip. An execution
// is recorded before it runs (`started`) and completed in place, so no tool runs without a record.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import { DENIAL_REASONS, TOOL_CALL_STATUSES, type DenialReason, type ToolCallStatus } from '../../models/tool-call';
import { decodeCursor, encodeCursor } from '../core/page-cursor';
import { storableText } from '../core/storable-text';
import { ValidationError } from '../errors';
import { pooledQuery, type PooledStatement } from '../db/pooled-statement';
import { claimArgument, type CapClaim } from './cap-usage';
import { callShadowSchema, type CallShadow } from '../core/shadow';
import type { DispatchMode } from '../core/dispatch-mode';
import { dispatchKindSchema, storedAtSchema, type DispatchKind } from '../core/types';
import { keptBody, type HeldKey, type KeptAnswer } from './idempotency-keys';

export interface ToolCallRecord {
  agent_id: number;
  tool_id: string;
  tool_name: string;
  status: ToolCallStatus;
  run: DispatchKind;
  routing_key: string | null;
  duration_ms: number;
  error: string | null;
  /** The approval request the call was filed as, or ran under (SEMANTICS §12). */
  approval_request_id?: number | null;
  /** Who approved the call that ran: a routing key, or `admin` / `dashboard` for an operator. */
  approved_by?: string | null;
  /** What an attachment's candidate terms would have made of the call, where they decide otherwise (SEMANTICS §15). */
  shadow?: CallShadow | null;
  /** How the call came to dispatch (SEMANTICS §15), so that a preview can replay it. */
  dispatch?: DispatchMode | null;
  /** The run the call was made in: calls of one run share it. */
  run_key?: string | null;
  /** The agent's policy version the call was decided under (SEMANTICS §16); null when not known. */
  policy_version?: number | null;
  /** Why a `denied` record was refused; null for any other status. */
  reason?: DenialReason | null;
}

/** What a `started` record also carries: who runs it, and how long before it may be called interrupted if that one dies. */
export interface StartedBy {
  instance_id: string;
  /** The tool's timeout plus the grace period, in ms. */
  deadline_ms: number;
}

/** How an execution ended, written over its `started` record. */
export interface ToolCallOutcome {
  status: 'success' | 'failure';
  duration_ms: number;
  error: string | null;
}

export const toolCallStatusSchema = z.enum(TOOL_CALL_STATUSES);

/** A tool-call record as the routes read it. */
export const toolCallViewSchema = z.object({
  id: z.number().int(),
  tool_id: z.string(),
  tool_name: z.string().describe('the legacy name'),
  status: toolCallStatusSchema,
  run: dispatchKindSchema,
  routing_key: z.string().nullable(),
  duration_ms: z.number().int(),
  error: z.string().nullable(),
  approval_request_id: z.number().int().nullable().describe('the approval request the call was filed as, or ran under'),
  approved_by: z.string().nullable().describe('who approved the call that ran: a routing key, or admin / dashboard'),
  shadow: callShadowSchema.optional(),
  policy_version: z
    .number()
    .int()
    .nullable()
    .describe("the agent's policy version the call was decided under; null on records written before versions were recorded"),
  reason: z.enum(DENIAL_REASONS).nullable().describe('why a denied call was refused; null for any other status'),
  created_at: storedAtSchema,
});
export type ToolCallView = z.output<typeof toolCallViewSchema>;

/**
 * Errors are stored for operators, bounded so a runaway message cannot bloat the table. Every
 * other column is bounded by validation before it gets here: tool ids by their schema, legacy
 * names at registration, routing keys by routingKeyOf.
 */
const MAX_ERROR_LENGTH = 2000;

/** Writes a record that is complete as it stands: a refusal (`denied`), a skip, a call filed for approval. Returns its id. */
export async function recordToolCall(sequelize: Sequelize, record: ToolCallRecord, transaction?: Transaction): Promise<number> {
  return insert(sequelize, record, transaction);
}

/**
 * Writes the `started` record of an execution about to run, and returns its id. With `caps`, the
 * same statement counts the call (SEMANTICS §13): null when no candidate has room, and then nothing
 * is written. So a count never goes without its record, nor a record without its count.
 */
export async function startToolCall(
  sequelize: Sequelize,
  record: Omit<ToolCallRecord, 'status' | 'duration_ms' | 'error'>,
  by: StartedBy,
  transaction?: Transaction,
  caps: CapClaim | null = null,
): Promise<number | null> {
  return insert(sequelize, { ...record, status: 'started', duration_ms: 0, error: null }, transaction, by, caps);
}

/**
 * Completes a `started` record with the execution's outcome; with `kept`, the same statement keeps
 * the answer of the request's Idempotency-Key (SEMANTICS §13), so a retry finds it as soon as the
 * outcome is on record, and the request waits on one commit, not two.
 */
export async function completeToolCall(
  sequelize: Sequelize,
  id: number,
  outcome: ToolCallOutcome,
  kept?: KeptAnswer & Pick<HeldKey, 'scope' | 'key'>,
): Promise<void> {
  const { duration_ms, error } = bounded(outcome);
  if (kept === undefined) {
    await pooledQuery(sequelize, COMPLETE, [id, outcome.status, duration_ms, error]);
    return;
  }
  await pooledQuery(sequelize, COMPLETE_KEEPING, [
    id,
    outcome.status,
    duration_ms,
    error,
    kept.scope,
    kept.key,
    kept.status,
    keptBody(kept.body),
  ]);
}

const COLUMNS =
  'agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, error, approval_request_id, approved_by, instance_id, deadline_at, shadow, dispatch, run_key, policy_version, reason';
// Every value typed: in INSERT … SELECT a parameter would otherwise be taken for text.
const VALUES =
  "$1::integer, $2::varchar, $3::varchar, $4::varchar, $5::varchar, $6::varchar, $7::integer, $8::text, $9::integer, $10::varchar, $11::varchar, now() + $12::double precision * interval '1 millisecond', $13::jsonb, $14::varchar, $15::uuid, $16::bigint, $17::varchar";
const INSERT: PooledStatement = {
  name: 'toolgate_tool_call_insert',
  text: `INSERT INTO tool_calls (${COLUMNS}) VALUES (${VALUES}) RETURNING id`,
};
// The row is written only when toolgate_claim_caps finds room, which it counts in the same statement.
const INSERT_COUNTED: PooledStatement = {
  name: 'toolgate_tool_call_insert_counted',
  text: `INSERT INTO tool_calls (${COLUMNS}) SELECT ${VALUES} WHERE toolgate_claim_caps($18::jsonb) IS NOT NULL RETURNING id`,
};
// `IS NOT DISTINCT FROM` (status is never null, so the same test) keeps the planner off the partial
// index of started records, which it would otherwise pick for this, seeing few such records: that
// index keeps an entry for every record completed since the last vacuum, and reading them cost a
// completion 0.3 ms at 6,000. For one id the primary key is the cheaper path whatever the statistics.
const COMPLETE: PooledStatement = {
  name: 'toolgate_tool_call_complete',
  text: `UPDATE tool_calls SET status = $2::varchar, duration_ms = $3::integer, error = $4::text WHERE id = $1::bigint AND status IS NOT DISTINCT FROM 'started'`,
};

// Both parts run whatever the other finds: the answer is the caller's, even where the sweeper has
// already called the record interrupted.
const COMPLETE_KEEPING: PooledStatement = {
  name: 'toolgate_tool_call_complete_keeping',
  text: `WITH completed AS (${COMPLETE.text} RETURNING id)
         UPDATE idempotency_keys SET state = 'done', status = $7::integer, body = $8::json WHERE scope = $5::varchar AND key = $6::varchar`,
};

async function insert(sequelize: Sequelize, record: ToolCallRecord, transaction?: Transaction, by?: StartedBy): Promise<number>;
async function insert(
  sequelize: Sequelize,
  record: ToolCallRecord,
  transaction: Transaction | undefined,
  by: StartedBy,
  caps: CapClaim | null,
): Promise<number | null>;
async function insert(
  sequelize: Sequelize,
  record: ToolCallRecord,
  transaction?: Transaction,
  by?: StartedBy,
  caps: CapClaim | null = null,
): Promise<number | null> {
  const statement = caps === null ? INSERT : INSERT_COUNTED;
  const values = insertValues(record, by, caps);
  // In a transaction, on the transaction's connection; else straight to a connection of the pool.
  const rows = transaction
    ? await sequelize.query<{ id: number | string }>(statement.text, { bind: values, type: QueryTypes.SELECT, transaction })
    : (await pooledQuery<{ id: number | string }>(sequelize, statement, values)).rows;
  const row = rows[0];
  if (row === undefined) return null;
  // BIGINT comes back as text; ids are far below 2^53.
  return Number(row.id);
}

/** The statement's parameters, in COLUMNS' order, then the caps to count. */
function insertValues(record: ToolCallRecord, by: StartedBy | undefined, caps: CapClaim | null): unknown[] {
  const { duration_ms, error } = bounded(record);
  const values: unknown[] = [
    record.agent_id,
    record.tool_id,
    record.tool_name,
    record.status,
    record.run,
    record.routing_key,
    duration_ms,
    error,
    record.approval_request_id ?? null,
    record.approved_by ?? null,
    by?.instance_id ?? null,
    by?.deadline_ms ?? null,
    record.shadow ? JSON.stringify(record.shadow) : null,
    record.dispatch ?? null,
    record.run_key ?? null,
    record.policy_version ?? null,
    record.reason ?? null,
  ];
  if (caps !== null) values.push(claimArgument(caps));
  return values;
}

function bounded(values: { duration_ms: number; error: string | null }): { duration_ms: number; error: string | null } {
  return {
    duration_ms: Math.max(0, Math.round(values.duration_ms)),
    // A tool's own words: made storable (SEMANTICS §13), so a NUL in them cannot lose the record.
    error: values.error === null ? null : storableText(values.error.slice(0, MAX_ERROR_LENGTH)),
  };
}

/** The columns a record's view is read from (ToolCallView's fields). */
export const TOOL_CALL_VIEW_COLUMNS = [
  'id',
  'tool_id',
  'tool_name',
  'status',
  'run',
  'routing_key',
  'duration_ms',
  'error',
  'approval_request_id',
  'approved_by',
  'policy_version',
  'reason',
  'shadow',
  'created_at',
] as const;

/** A record's row as TOOL_CALL_VIEW_COLUMNS read it. */
export type ToolCallRow = Omit<ToolCallView, 'created_at' | 'id' | 'shadow' | 'policy_version'> & {
  id: number | string;
  /** BIGINT comes back as text; a version stays far below 2^53. */
  policy_version: number | string | null;
  created_at: Date | null;
  shadow?: CallShadow | null;
};

/** What the API gives of a record, from its row. */
export function toolCallView(row: ToolCallRow): ToolCallView {
  // Rows the legacy application wrote into an adopted table may lack the newer columns; a record
  // carries `shadow` only where a candidate decided otherwise (SEMANTICS §15).
  const { shadow, ...rest } = row;
  return {
    ...rest,
    id: Number(row.id),
    policy_version: row.policy_version === null || row.policy_version === undefined ? null : Number(row.policy_version),
    created_at: row.created_at ? row.created_at.toISOString() : null,
    ...(shadow ? { shadow } : {}),
  };
}

/** Which page of an agent's records: at most `limit`, of one status or any, older than the cursor's. */
export interface ToolCallPageQuery {
  limit: number;
  status?: ToolCallStatus | undefined;
  /** The cursor a previous page gave as `next`; none: the newest records. */
  after?: string | undefined;
}

export interface ToolCallPage {
  calls: ToolCallView[];
  /** The cursor of the older records after this page; null: this is the last. */
  next: string | null;
}

/**
 * A page of the agent's records, newest first, each page starting just below the last id the
 * previous one showed. Records written between two pages are newer than both, so they never push
 * one already shown onto the next. The order is the id's, which the indexes on (agent_id, id) and
 * (agent_id, status, id) hold: each page reads its own rows of them and no more.
 */
export async function pageToolCalls(sequelize: Sequelize, agentId: number, query: ToolCallPageQuery): Promise<ToolCallPage> {
  let beforeId: number | undefined;
  if (query.after !== undefined) {
    const key = decodeCursor(query.after, ['id']);
    if (key === null)
      throw new ValidationError([
        {
          loc: ['query', 'after'],
          msg: 'not a cursor of these records: pass the `after` a page of them gave as its next (Toolgate-Next-Cursor), or none for the newest',
          type: 'invalid_cursor',
        },
      ]);
    beforeId = key[0] as number;
  }
  const rows = await listToolCalls(sequelize, agentId, query.limit + 1, query.status, beforeId);
  const calls = rows.slice(0, query.limit);
  const last = calls[calls.length - 1];
  return { calls, next: rows.length > query.limit && last ? encodeCursor([last.id]) : null };
}

/** The agent's newest records first; with `status`, only those (the dashboard's refusals view); with `beforeId`, only older ones. */
async function listToolCalls(
  sequelize: Sequelize,
  agentId: number,
  limit: number,
  status?: ToolCallStatus,
  beforeId?: number,
): Promise<ToolCallView[]> {
  const rows = await sequelize.query<ToolCallRow>(
    `SELECT ${TOOL_CALL_VIEW_COLUMNS.join(', ')}
       FROM tool_calls WHERE agent_id = :agentId ${status ? 'AND status = :status' : ''} ${beforeId !== undefined ? 'AND id < :beforeId' : ''}
      ORDER BY id DESC LIMIT :limit`,
    { replacements: { agentId, limit, status: status ?? null, beforeId: beforeId ?? null }, type: QueryTypes.SELECT },
  );
  return rows.map(toolCallView);
}
