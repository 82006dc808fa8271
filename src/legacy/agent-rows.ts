// Reads for the enabled_tools planner, as plain rows: agents a batch at a time (keyset on id, so
// memory stays flat however large the table), each with its attachments, their toolkits and rules.
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

/** The next `limit` agents with an id above `after` (null: from the first), in id order. */
export async function readAgentBatch(
  sequelize: Sequelize,
  opts: { after: number | null; limit: number; withAttachments: boolean; transaction: Transaction },
): Promise<StoredAgentRow[]> {
  const rows = await sequelize.query<RawAgentRow>(
    `SELECT a.id, a.name::text AS name, a.enabled_tools::text AS enabled_tools,
            ${opts.withAttachments ? ATTACHMENTS_JSON : `'[]'::json`} AS attachments
       FROM agents a
      WHERE $1::bigint IS NULL OR a.id > $1::bigint
      ORDER BY a.id
      LIMIT $2`,
    { bind: [opts.after, opts.limit], type: QueryTypes.SELECT, transaction: opts.transaction },
  );
  return rows.map(agentRow);
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
export async function readLegacyToolkits(sequelize: Sequelize, transaction: Transaction, toolSets?: string[]): Promise<Map<string, LegacyToolkitRow>> {
  const rows = await sequelize.query<LegacyToolkitRow>(
    `SELECT id, name, legacy_tool_set, member_tool_ids FROM toolkits
      WHERE legacy_tool_set IS NOT NULL AND ($1::text[] IS NULL OR legacy_tool_set = ANY($1::text[]))`,
    { bind: [toolSets ?? null], type: QueryTypes.SELECT, transaction },
  );
  return new Map(rows.map((t) => [t.legacy_tool_set, t]));
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
