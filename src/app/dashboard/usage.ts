// Who holds what, for the lists: read in one query each, not one per row.
import { QueryTypes, type Sequelize } from 'sequelize';
import type { RuleView } from '../../services/attachments';

export async function attachmentCounts(sequelize: Sequelize): Promise<Map<number, number>> {
  const rows = await sequelize.query<{ toolkit_id: number; n: string }>(
    'SELECT toolkit_id, count(*) AS n FROM agent_toolkits GROUP BY toolkit_id',
    { type: QueryTypes.SELECT },
  );
  return new Map(rows.map((r) => [r.toolkit_id, Number(r.n)]));
}

export async function agentsHolding(sequelize: Sequelize, toolkitId: number): Promise<{ id: number; name: string }[]> {
  return sequelize.query<{ id: number; name: string }>(
    'SELECT a.id, a.name FROM agent_toolkits at JOIN agents a ON a.id = at.agent_id WHERE at.toolkit_id = :toolkitId ORDER BY a.id',
    { replacements: { toolkitId }, type: QueryTypes.SELECT },
  );
}

/** How many agents hold the toolkit: counted, not read, since a system toolkit may be every agent's. */
export async function holderCount(sequelize: Sequelize, toolkitId: number): Promise<number> {
  const [row] = await sequelize.query<{ n: string }>(
    'SELECT count(DISTINCT agent_id) AS n FROM agent_toolkits WHERE toolkit_id = :toolkitId',
    {
      replacements: { toolkitId },
      type: QueryTypes.SELECT,
    },
  );
  return Number(row?.n ?? 0);
}

/** The toolkit names of the agents a page shows (never of every agent). */
export async function toolkitNamesByAgent(sequelize: Sequelize, agentIds: readonly number[]): Promise<Map<number, string[]>> {
  if (agentIds.length === 0) return new Map();
  const rows = await sequelize.query<{ agent_id: number; name: string }>(
    'SELECT at.agent_id, t.name FROM agent_toolkits at JOIN toolkits t ON t.id = at.toolkit_id WHERE at.agent_id IN (:agentIds) ORDER BY at.agent_id, at.id',
    { replacements: { agentIds }, type: QueryTypes.SELECT },
  );
  const byAgent = new Map<number, string[]>();
  for (const r of rows) byAgent.set(r.agent_id, [...(byAgent.get(r.agent_id) ?? []), r.name]);
  return byAgent;
}

/** The access rules of the agents a page shows, each agent's in the order they were added. */
export async function accessRulesByAgent(sequelize: Sequelize, agentIds: readonly number[]): Promise<Map<number, RuleView[]>> {
  if (agentIds.length === 0) return new Map();
  const rows = await sequelize.query<RuleView & { agent_id: number }>(
    'SELECT agent_id, id, kind, pattern FROM agent_access_rules WHERE agent_id IN (:agentIds) ORDER BY agent_id, id',
    { replacements: { agentIds }, type: QueryTypes.SELECT },
  );
  const byAgent = new Map<number, RuleView[]>();
  for (const { agent_id, ...rule } of rows) byAgent.set(agent_id, [...(byAgent.get(agent_id) ?? []), rule]);
  return byAgent;
}
