// Gives one agent exactly the access its legacy `enabled_tools` string grants, as a shared
// "Legacy: ..." toolkit attached with an open gate: the step taken when a legacy client creates or
// updates an agent with such a string. The same planner as the bulk migration (src/legacy/plan.ts),
// for one agent, beside whatever else the agent holds.
import type { Sequelize, Transaction } from 'sequelize';
import { legacyToolSetKey, mappedToolIds, readEnabledTools, type LegacyReading } from '../core/legacy-enabled-tools';
import type { ToolManifest } from '../core/tool-manifest';
import { ConflictError, NotFoundError } from '../errors';
import { readAgent, readLegacyToolkits } from '../legacy/agent-rows';
import { ensureLegacyToolkit, writePlans } from '../legacy/legacy-toolkits';
import { planAgent } from '../legacy/plan';

export interface LegacyAttachResult extends LegacyReading {
  toolkit_id: number | null;
}

/**
 * Runs in the caller's transaction, after the agent's row holds `enabledTools`. Removes the agent's
 * earlier legacy grant when its set changed; operators' grants stay. A grant the admin mapped from
 * typos (see the migration's map_typos) stays while the string is unchanged.
 */
export async function attachLegacyToolkit(
  sequelize: Sequelize,
  manifest: ToolManifest,
  agentId: number,
  enabledTools: string | null,
  transaction: Transaction,
): Promise<LegacyAttachResult> {
  const row = await readAgent(sequelize, agentId, transaction);
  if (!row) throw new NotFoundError(`Agent ${agentId}`);
  const reading = readEnabledTools(enabledTools, manifest.ids);
  const toolSet = legacyToolSetKey(reading.tool_ids);
  // The toolkits the plan may need: this string's exact set, and its typo-mapped one.
  const toolkits = await readLegacyToolkits(sequelize, transaction, [toolSet, legacyToolSetKey(mappedToolIds(reading))]);
  const plan = planAgent(
    { ...row, enabled_tools: enabledTools },
    { registeredIds: manifest.ids, mapTypos: false, toolkits, scope: 'agent' },
  );
  if (plan.kind === 'skip') {
    throw new ConflictError(
      `The legacy toolkit for "${toolSet}" has had its members edited, so it no longer grants exactly that set: ${plan.detail}. Restore its members or clear its legacy link.`,
    );
  }
  const ids = new Map<string, number>();
  let toolkitId = plan.toolkit_id;
  if (plan.tool_ids.length > 0) {
    toolkitId ??= (await ensureLegacyToolkit(sequelize, plan.tool_ids, transaction)).id;
    ids.set(legacyToolSetKey(plan.tool_ids), toolkitId);
  }
  await writePlans(sequelize, [plan], ids, transaction);
  return { tool_ids: plan.tool_ids, unmatched: reading.unmatched, toolkit_id: toolkitId };
}
