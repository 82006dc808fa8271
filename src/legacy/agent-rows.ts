// Reads for the enabled_tools planner, as plain rows: every agent in id order through one cursor
// (one plan, fetched a chunk at a time, so memory stays flat however large the table), and one
// agent with its attachments, their toolkits and rules.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { GateRule } from '../core/types';
import type { AgentAttachmentRow, LegacyAgentRow, LegacyToolkitRow } from './plan';

export interface StoredAttachmentRow extends AgentAttachmentRow {
  rules: GateRule[];
}

export interface StoredAgentRow extends LegacyAgentRow {
  attachments: StoredAttachmentRow[];
}

const ATTACHMENTS_JSON = `
  COALESCE((
    SELECT json_agg(json_build_object(
             'attachment_id', at.id, 'toolkit_id', t.id, 'toolkit_name', t.name, 'origin', at.origin,
             'allow_proactive', at.allow_proactive, 'legacy_tool_set', t.legacy_tool_set,
             'member_tool_ids', t.member_tool_ids,
             'rules', COALESCE((SELECT json_agg(json_build_object('id', r.id, 'kind', r.kind, 'pattern', r.pattern) ORDER BY r.id)
                                  FROM agent_toolkit_rules r WHERE r.agent_toolkit_id = at.id), '[]'::json))
           ORDER BY at.id)
      FROM agent_toolkits at JOIN toolkits t ON t.id = at.toolkit_id
     WHERE at.agent_id = a.id), '[]'::json)`;

interface RawAgentRow {
  id: number | string;
  name: string | null;
  enabled_tools: string | null;
  attachments: Omit<StoredAttachmentRow, 'rule_count'>[];
}

/**
 * Whether toolgate's own tables exist. A dry run may preview a legacy database before any schema
 * migration (every agent then has no attachment); an apply or undo needs them.
 */
export async function hasToolgateTables(sequelize: Sequelize, transaction: Transaction): Promise<boolean> {
  const [row] = await sequelize.query<{ ok: boolean }>(
    `SELECT to_regclass('toolkits') IS NOT NULL AND to_regclass('agent_toolkits') IS NOT NULL
        AND to_regclass('agent_toolkit_rules') IS NOT NULL AS ok`,
    { type: QueryTypes.SELECT, transaction },
  );
  return row?.ok === true;
}

export async function countAgents(sequelize: Sequelize, transaction: Transaction): Promise<number> {
  const [row] = await sequelize.query<{ n: string }>('SELECT count(*) AS n FROM agents', { type: QueryTypes.SELECT, transaction });
  return Number(row?.n ?? 0);
}

/** The one legacy grant of an agent that holds nothing else: no rules on it, scheduled runs off. */
export interface PlainGrant {
  attachment_id: number;
  toolkit_id: number;
}

/**
 * An agent as the migration streams it. A plain agent (no attachment at all, or only one clean
 * legacy grant: the common case) comes without the attachment details, which then follow from
 * `grant` and its toolkit; any other agent comes with all of them in `attachments`.
 */
export interface StreamedAgentRow {
  id: number;
  name: string | null;
  enabled_tools: string | null;
  grant: PlainGrant | null;
  /** null for a plain agent. */
  attachments: StoredAttachmentRow[] | null;
}

/** Agents grouped by what decides their plan: the string, and the toolkit of their one clean legacy grant (null: none). */
export interface PlainClass {
  enabled_tools: string | null;
  toolkit_id: number | null;
  agents: number;
  /** The lowest agent id of the class. */
  first_id: number;
}

// Per agent with any attachment: how many, and whether its only one is a clean legacy grant.
// Aggregated in one pass over agent_toolkits, joined to agents by hash or merge, not per agent.
export const HELD = `
  held AS (
    SELECT at.agent_id, count(*) AS n, min(at.id) AS attachment_id, min(at.toolkit_id) AS toolkit_id,
           bool_and(at.origin = 'legacy' AND NOT at.allow_proactive AND r.agent_toolkit_id IS NULL) AS clean
      FROM agent_toolkits at
      LEFT JOIN (SELECT DISTINCT agent_toolkit_id FROM agent_toolkit_rules) r ON r.agent_toolkit_id = at.id
     GROUP BY at.agent_id)`;
export const PLAIN = '(h.agent_id IS NULL OR (h.n = 1 AND h.clean))';

export interface AgentStreamOptions {
  /** false on a legacy database not yet adopted: nobody holds anything. */
  withAttachments: boolean;
  /** Every agent with all its attachments, plain or not. */
  everyAgentInFull?: boolean;
  /** Only agents that are not plain, and plain ones of these classes. */
  onlyNotPlainAnd?: readonly { enabled_tools: string | null; toolkit_id: number | null }[];
  chunk: number;
  transaction: Transaction;
}

const CURSOR = 'toolgate_migration_agents';

/**
 * Every agent (or those `onlyNotPlainAnd` asks for), in id order, handed to `fn` a chunk at a time.
 * One query behind a cursor: the transaction's snapshot, one plan, and nothing held but a chunk.
 */
export async function streamAgents(
  sequelize: Sequelize,
  opts: AgentStreamOptions,
  fn: (rows: StreamedAgentRow[]) => void | Promise<void>,
): Promise<void> {
  const { transaction } = opts;
  let sql: string;
  let bind: unknown[] = [];
  if (!opts.withAttachments) {
    sql = `SELECT a.id, a.name::text AS name, a.enabled_tools::text AS enabled_tools,
                  NULL::int AS attachment_id, NULL::int AS toolkit_id, NULL::json AS attachments
             FROM agents a ORDER BY a.id`;
  } else if (opts.everyAgentInFull) {
    sql = `SELECT a.id, a.name::text AS name, a.enabled_tools::text AS enabled_tools,
                  NULL::int AS attachment_id, NULL::int AS toolkit_id, ${ATTACHMENTS_JSON} AS attachments
             FROM agents a ORDER BY a.id`;
  } else {
    const classes = opts.onlyNotPlainAnd;
    const where = classes
      ? `WHERE NOT ${PLAIN} OR EXISTS (SELECT 1 FROM unnest($1::text[], $2::int[], $3::bool[], $4::bool[]) c(s, k, s_null, k_null)
                                        WHERE (coalesce(a.enabled_tools::text, '') COLLATE "C") = c.s AND (a.enabled_tools IS NULL) = c.s_null
                                          AND coalesce(h.toolkit_id, 0) = coalesce(c.k, 0) AND (h.toolkit_id IS NULL) = c.k_null)`
      : '';
    if (classes) {
      bind = [
        classes.map((c) => c.enabled_tools ?? ''),
        classes.map((c) => c.toolkit_id),
        classes.map((c) => c.enabled_tools === null),
        classes.map((c) => c.toolkit_id === null),
      ];
    }
    sql = `WITH ${HELD}
           SELECT a.id, a.name::text AS name, a.enabled_tools::text AS enabled_tools,
                  CASE WHEN h.n = 1 AND h.clean THEN h.attachment_id END AS attachment_id,
                  CASE WHEN h.n = 1 AND h.clean THEN h.toolkit_id END AS toolkit_id,
                  CASE WHEN ${PLAIN} THEN NULL ELSE ${ATTACHMENTS_JSON} END AS attachments
             FROM agents a LEFT JOIN held h ON h.agent_id = a.id
             ${where}
            ORDER BY a.id`;
  }
  await sequelize.query(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${sql}`, { bind, transaction });
  try {
    for (;;) {
      const rows = await sequelize.query<RawStreamedRow>(`FETCH FORWARD ${Math.max(1, Math.floor(opts.chunk))} FROM ${CURSOR}`, {
        type: QueryTypes.SELECT,
        transaction,
      });
      if (rows.length === 0) break;
      await fn(rows.map(streamedRow));
    }
  } finally {
    await sequelize.query(`CLOSE ${CURSOR}`, { transaction }).catch(() => undefined);
  }
}

/**
 * The plain agents' classes with how many agents each holds, and how many agents are not plain; or
 * null when there are more than `bound` classes (then the caller goes agent by agent). One
 * aggregate over the whole table.
 */
export async function readPlainClasses(
  sequelize: Sequelize,
  bound: number,
  transaction: Transaction,
): Promise<{ classes: PlainClass[]; notPlain: number } | null> {
  const rows = await sequelize.query<{
    enabled_tools: string | null;
    toolkit_id: number | null;
    plain: boolean;
    agents: string;
    first_id: number | string;
  }>(
    `WITH ${HELD}
     -- Grouped bytewise ("C"), as the planner keys classes: under a legacy column's case-insensitive
     -- collation, 'Email_Analyzer' and 'email_analyzer' would be one group with one string checked.
     SELECT CASE WHEN ${PLAIN} THEN a.enabled_tools::text COLLATE "C" END AS enabled_tools,
            CASE WHEN ${PLAIN} AND h.agent_id IS NOT NULL THEN h.toolkit_id END AS toolkit_id,
            ${PLAIN} AS plain, count(*) AS agents, min(a.id) AS first_id
       FROM agents a LEFT JOIN held h ON h.agent_id = a.id
      GROUP BY 1, 2, 3
      LIMIT $1`,
    { bind: [bound + 2], type: QueryTypes.SELECT, transaction },
  );
  const plain = rows.filter((r) => r.plain);
  if (plain.length > bound) return null;
  return {
    classes: plain.map((r) => ({
      enabled_tools: r.enabled_tools,
      toolkit_id: r.toolkit_id === null ? null : Number(r.toolkit_id),
      agents: Number(r.agents),
      first_id: Number(r.first_id),
    })),
    notPlain: rows.filter((r) => !r.plain).reduce((n, r) => n + Number(r.agents), 0),
  };
}

/** Toolkits by id, as the planner sees them in an attachment. */
export async function readToolkitsById(
  sequelize: Sequelize,
  ids: readonly number[],
  transaction: Transaction,
): Promise<Map<number, { name: string; legacy_tool_set: string | null; member_tool_ids: string[] }>> {
  const rows = await sequelize.query<{ id: number; name: string; legacy_tool_set: string | null; member_tool_ids: string[] | null }>(
    'SELECT id, name, legacy_tool_set, member_tool_ids FROM toolkits WHERE id = ANY($1::int[])',
    { bind: [ids], type: QueryTypes.SELECT, transaction },
  );
  return new Map(
    rows.map((t) => [Number(t.id), { name: t.name, legacy_tool_set: t.legacy_tool_set, member_tool_ids: t.member_tool_ids ?? [] }]),
  );
}

/** One agent, or null when there is none. */
export async function readAgent(sequelize: Sequelize, agentId: number, transaction: Transaction): Promise<StoredAgentRow | null> {
  const [row] = await sequelize.query<RawAgentRow>(
    `SELECT a.id, a.name::text AS name, a.enabled_tools::text AS enabled_tools, ${ATTACHMENTS_JSON} AS attachments
       FROM agents a WHERE a.id = $1`,
    { bind: [agentId], type: QueryTypes.SELECT, transaction },
  );
  return row ? agentRow(row) : null;
}

/** The toolkits the planner made (few: one per distinct set), by the set each stands for; only `toolSets` when given. */
export async function readLegacyToolkits(
  sequelize: Sequelize,
  transaction: Transaction,
  toolSets?: string[],
): Promise<Map<string, LegacyToolkitRow>> {
  const rows = await sequelize.query<LegacyToolkitRow>(
    `SELECT id, name, legacy_tool_set, member_tool_ids FROM toolkits
      WHERE legacy_tool_set IS NOT NULL AND ($1::text[] IS NULL OR legacy_tool_set = ANY($1::text[]))`,
    { bind: [toolSets ?? null], type: QueryTypes.SELECT, transaction },
  );
  return new Map(rows.map((t) => [t.legacy_tool_set, t]));
}

interface RawStreamedRow {
  id: number | string;
  name: string | null;
  enabled_tools: string | null;
  attachment_id: number | null;
  toolkit_id: number | null;
  attachments: Omit<StoredAttachmentRow, 'rule_count'>[] | null;
}

function streamedRow(raw: RawStreamedRow): StreamedAgentRow {
  return {
    id: Number(raw.id),
    name: raw.name,
    enabled_tools: raw.enabled_tools,
    grant:
      raw.toolkit_id === null || raw.attachment_id === null
        ? null
        : { attachment_id: Number(raw.attachment_id), toolkit_id: Number(raw.toolkit_id) },
    attachments:
      raw.attachments === null
        ? null
        : raw.attachments.map((a) => ({ ...a, member_tool_ids: a.member_tool_ids ?? [], rule_count: a.rules.length })),
  };
}

function agentRow(raw: RawAgentRow): StoredAgentRow {
  return {
    // A legacy bigint id comes back as a string; ids stay within JavaScript's safe integers.
    id: Number(raw.id),
    name: raw.name,
    enabled_tools: raw.enabled_tools,
    attachments: raw.attachments.map((a) => ({ ...a, member_tool_ids: a.member_tool_ids ?? [], rule_count: a.rules.length })),
  };
}
