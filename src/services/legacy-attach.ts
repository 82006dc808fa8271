// Gives one agent exactly the access its legacy `enabled_tools` string grants, as a shared
// "Legacy: ..." toolkit attached with an open gate: the per-agent step of the enabled_tools
// migration, also taken when a legacy client creates or updates an agent with such a string.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { legacyToolkitName, readEnabledTools, type LegacyReading } from '../core/legacy-enabled-tools';
import type { ToolManifest } from '../core/tool-manifest';

export interface LegacyAttachResult extends LegacyReading {
  toolkit_id: number | null;
}

export async function attachLegacyToolkit(
  sequelize: Sequelize,
  manifest: ToolManifest,
  agentId: number,
  enabledTools: string | null,
  transaction: Transaction,
  toolIds?: string[],
): Promise<LegacyAttachResult> {
  const reading = readEnabledTools(enabledTools, manifest.ids);
  const ids = toolIds ?? reading.tool_ids;
  const toolSet = ids.join(',');
  const toolkitId = ids.length > 0 ? await findOrCreateLegacyToolkit(sequelize, ids, transaction) : null;
  // The agent's earlier legacy grant, if its string changed, goes; operators' grants stay.
  await sequelize.query(
    `DELETE FROM agent_toolkits at USING toolkits t
      WHERE at.toolkit_id = t.id AND at.agent_id = :agentId AND at.origin = 'legacy'
        AND t.legacy_tool_set IS DISTINCT FROM :toolSet`,
    { replacements: { agentId, toolSet }, transaction },
  );
  if (toolkitId !== null) {
    await sequelize.query(
      `INSERT INTO agent_toolkits (agent_id, toolkit_id, allow_proactive, origin)
       VALUES (:agentId, :toolkitId, false, 'legacy') ON CONFLICT (agent_id, toolkit_id) DO NOTHING`,
      { replacements: { agentId, toolkitId }, transaction },
    );
  }
  return { ...reading, tool_ids: ids, toolkit_id: toolkitId };
}

async function findOrCreateLegacyToolkit(sequelize: Sequelize, ids: string[], transaction: Transaction): Promise<number> {
  const toolSet = ids.join(',');
  const [row] = await sequelize.query<{ id: number }>(
    `WITH made AS (
       INSERT INTO toolkits (name, description, member_tool_ids, legacy_tool_set)
       VALUES (:name, :description, ARRAY[:ids]::varchar(64)[], :toolSet)
       ON CONFLICT (legacy_tool_set) WHERE legacy_tool_set IS NOT NULL DO NOTHING
       RETURNING id)
     SELECT id FROM made UNION ALL SELECT id FROM toolkits WHERE legacy_tool_set = :toolSet LIMIT 1`,
    {
      replacements: {
        name: legacyToolkitName(ids),
        description: `Made from the legacy enabled_tools string "${ids.join(',')}".`,
        ids,
        toolSet,
      },
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  if (row) return row.id;
  // A concurrent transaction made the same toolkit first: our statement's snapshot predates it.
  const [made] = await sequelize.query<{ id: number }>('SELECT id FROM toolkits WHERE legacy_tool_set = :toolSet', {
    replacements: { toolSet },
    type: QueryTypes.SELECT,
    transaction,
  });
  return made.id;
}
