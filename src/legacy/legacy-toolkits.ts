// Writes shared by the bulk migration and the per-agent path: the toolkit that stands for a set of
// ids ("Legacy: a, b", found by `legacy_tool_set`), and the legacy grants that follow a plan.
import { QueryTypes, UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import { legacyToolkitName, legacyToolSetKey } from '../core/legacy-enabled-tools';
import { HELD, PLAIN } from './agent-rows';
import type { AgentPlan, LegacyToolkitRow } from './plan';

export interface ChosenName {
  name: string;
  /** Set when the plain name was taken by a toolkit that is not this set's. */
  note?: string;
}

// More attempts than this means something is generating names in a loop; stop and say so.
const MAX_NAME_ATTEMPTS = 50;

/**
 * The name a new toolkit for `toolIds` gets: "Legacy: a, b", or "Legacy: a, b (2)" and so on when
 * an operator's toolkit already holds it (names are unique regardless of case). An operator's
 * toolkit is never adopted nor renamed: its members and terms are the operator's.
 */
export async function chooseLegacyToolkitName(
  sequelize: Sequelize,
  toolIds: readonly string[],
  transaction: Transaction,
): Promise<ChosenName> {
  const plain = legacyToolkitName(toolIds);
  for (let attempt = 1; attempt <= MAX_NAME_ATTEMPTS; attempt++) {
    const name = legacyToolkitName(toolIds, attempt);
    const [taken] = await sequelize.query<{ id: number }>('SELECT id FROM toolkits WHERE lower(name) = lower($1) LIMIT 1', {
      bind: [name],
      type: QueryTypes.SELECT,
      transaction,
    });
    if (!taken)
      return attempt === 1
        ? { name }
        : {
            name,
            note: `named "${name}" because toolkit #${await idOfName(sequelize, plain, transaction)} already holds the name "${plain}"`,
          };
  }
  throw new Error(
    `No free toolkit name for the legacy set ${legacyToolSetKey(toolIds)} after ${MAX_NAME_ATTEMPTS} attempts: rename the toolkits called "${plain} (n)".`,
  );
}

/**
 * The toolkit standing for `toolIds`, made when missing. Safe against a concurrent transaction
 * making the same set (the unique `legacy_tool_set` decides) or taking the chosen name first.
 */
export async function ensureLegacyToolkit(
  sequelize: Sequelize,
  toolIds: readonly string[],
  transaction: Transaction,
): Promise<LegacyToolkitRow & { created: boolean; note?: string }> {
  const ids = [...new Set(toolIds)].sort();
  const toolSet = legacyToolSetKey(ids);
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await findBySet(sequelize, toolSet, transaction);
    if (existing) return { ...existing, created: false };
    const chosen = await chooseLegacyToolkitName(sequelize, ids, transaction);
    try {
      const made = await sequelize.transaction({ transaction }, async (savepoint) => {
        const [row] = await sequelize.query<{ id: number }>(
          `INSERT INTO toolkits (name, description, member_tool_ids, legacy_tool_set)
           VALUES ($1, $2, $3::varchar(64)[], $4)
           ON CONFLICT (legacy_tool_set) WHERE legacy_tool_set IS NOT NULL DO NOTHING
           RETURNING id`,
          {
            bind: [chosen.name, `Made from the legacy enabled_tools string "${toolSet}".`, ids, toolSet],
            type: QueryTypes.SELECT,
            transaction: savepoint,
          },
        );
        return row;
      });
      if (made) return { id: made.id, name: chosen.name, legacy_tool_set: toolSet, member_tool_ids: ids, created: true, note: chosen.note };
    } catch (err) {
      // Someone took the name between our look and our insert: look again.
      if (!(err instanceof UniqueConstraintError)) throw err;
    }
  }
  const made = await findBySet(sequelize, toolSet, transaction);
  if (made) return { ...made, created: false };
  throw new Error(`Could not make the legacy toolkit for ${toolSet}: its name kept being taken concurrently. Retry.`);
}

export interface PlanWrites {
  attachments_created: number;
  attachments_removed: number;
}

/**
 * Writes the follow plans: removes the legacy grants they drop, then grants each agent its set's
 * toolkit with no rules and scheduled runs off. `toolkitIds` maps every needed set to its toolkit.
 * Only `origin = 'legacy'` rows are ever removed here.
 */
export async function writePlans(
  sequelize: Sequelize,
  plans: readonly AgentPlan[],
  toolkitIds: ReadonlyMap<string, number>,
  transaction: Transaction,
): Promise<PlanWrites> {
  const detach: number[] = [];
  const agentIds: number[] = [];
  const kitIds: number[] = [];
  for (const plan of plans) {
    if (plan.kind !== 'follow') continue;
    detach.push(...plan.detach);
    if (!plan.attach) continue;
    const kit = plan.toolkit_id ?? toolkitIds.get(legacyToolSetKey(plan.tool_ids));
    if (kit === undefined) throw new Error(`No toolkit for the legacy set ${legacyToolSetKey(plan.tool_ids)} (agent ${plan.agent_id}).`);
    agentIds.push(plan.agent_id);
    kitIds.push(kit);
  }
  let removed = 0;
  if (detach.length > 0) {
    const rows = await sequelize.query('DELETE FROM agent_toolkits WHERE id = ANY($1::int[]) AND origin = $2 RETURNING id', {
      bind: [detach, 'legacy'],
      type: QueryTypes.SELECT,
      transaction,
    });
    removed = rows.length;
  }
  let created = 0;
  if (agentIds.length > 0) {
    const rows = await sequelize.query(
      `INSERT INTO agent_toolkits (agent_id, toolkit_id, allow_proactive, origin)
       SELECT u.agent_id, u.toolkit_id, false, 'legacy' FROM unnest($1::int[], $2::int[]) AS u(agent_id, toolkit_id)
       ON CONFLICT (agent_id, toolkit_id) DO NOTHING RETURNING id`,
      { bind: [agentIds, kitIds], type: QueryTypes.SELECT, transaction },
    );
    created = rows.length;
  }
  return { attachments_created: created, attachments_removed: removed };
}

/** Plain agents that share a string and a grant, and what their shared plan writes. */
export interface ClassWrite {
  enabled_tools: string | null;
  /** The toolkit of their one clean legacy grant; null: they hold nothing. */
  toolkit_id: number | null;
  /** Their grant goes (it is for another set). */
  detach: boolean;
  /** The toolkit they are granted; null: none. */
  attach_toolkit_id: number | null;
}

/**
 * Writes the shared plans of whole classes of plain agents in one statement: the database finds
 * each class's agents (as streamAgents classes them), removes the legacy grants they drop and
 * grants the new ones. Only `origin = 'legacy'` rows are ever removed here. A plain agent holds no
 * grant of its target already (else its plan would not attach), so a conflict cannot happen; were
 * one to, the unique key refuses it and the apply rolls back.
 */
export async function writeClassPlans(sequelize: Sequelize, classes: readonly ClassWrite[], transaction: Transaction): Promise<PlanWrites> {
  if (classes.length === 0) return { attachments_created: 0, attachments_removed: 0 };
  const [row] = await sequelize.query<{ removed: string; created: string }>(
    `WITH ${HELD},
     c AS (SELECT * FROM unnest($1::text[], $2::bool[], $3::int[], $4::bool[], $5::int[], $6::bool[]) AS c(s, s_null, k, detach, target, k_null)),
     -- Plain equalities (no OR, no IS NOT DISTINCT FROM), so that the join can hash: thousands of classes.
     -- Bytewise ("C"): a legacy column may carry a case-insensitive collation, under which two strings
     -- the planner keeps apart would match one class.
     m AS (SELECT a.id AS agent_id, h.attachment_id, c.detach, c.target
             FROM agents a LEFT JOIN held h ON h.agent_id = a.id
             JOIN c ON (coalesce(a.enabled_tools::text, '') COLLATE "C") = c.s AND (a.enabled_tools IS NULL) = c.s_null
                  AND coalesce(h.toolkit_id, 0) = coalesce(c.k, 0) AND (h.toolkit_id IS NULL) = c.k_null
            WHERE ${PLAIN}),
     gone AS (DELETE FROM agent_toolkits at USING m WHERE m.detach AND at.id = m.attachment_id AND at.origin = 'legacy' RETURNING at.id),
     made AS (INSERT INTO agent_toolkits (agent_id, toolkit_id, allow_proactive, origin)
              SELECT m.agent_id, m.target, false, 'legacy' FROM m WHERE m.target IS NOT NULL RETURNING id)
     SELECT (SELECT count(*) FROM gone) AS removed, (SELECT count(*) FROM made) AS created`,
    {
      bind: [
        classes.map((c) => c.enabled_tools ?? ''),
        classes.map((c) => c.enabled_tools === null),
        classes.map((c) => c.toolkit_id),
        classes.map((c) => c.detach),
        classes.map((c) => c.attach_toolkit_id),
        classes.map((c) => c.toolkit_id === null),
      ],
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return { attachments_created: Number(row?.created ?? 0), attachments_removed: Number(row?.removed ?? 0) };
}

async function findBySet(sequelize: Sequelize, toolSet: string, transaction: Transaction): Promise<LegacyToolkitRow | undefined> {
  const [row] = await sequelize.query<LegacyToolkitRow>(
    'SELECT id, name, legacy_tool_set, member_tool_ids FROM toolkits WHERE legacy_tool_set = $1',
    {
      bind: [toolSet],
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return row;
}

async function idOfName(sequelize: Sequelize, name: string, transaction: Transaction): Promise<number | null> {
  const [row] = await sequelize.query<{ id: number }>('SELECT id FROM toolkits WHERE lower(name) = lower($1)', {
    bind: [name],
    type: QueryTypes.SELECT,
    transaction,
  });
  return row?.id ?? null;
}
