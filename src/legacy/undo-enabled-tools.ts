// Undoing the enabled_tools migration, in one transaction: removes the legacy grants the planner
// made and the legacy toolkits nothing uses any more. Operators' toolkits and grants stay, and so do
// the planner's own where an operator has since edited or built on them (listed in the report).
import { QueryTypes, type Sequelize } from 'sequelize';
import type { ToolManifest } from '../core/tool-manifest';
import { BATCH_WORK_SETTINGS, setLocal } from '../db/transaction-settings';
import { countAgents, hasToolgateTables } from './agent-rows';
import { MigrationBusyError, ParityMismatchError, SchemaNotMigratedError } from '../errors';
import {
  DEFAULT_REPORT_LIMITS,
  ReportBuilder,
  type MigrationReport,
  type ParityMismatch,
  type ReportLimits,
  type UndoSection,
} from './report';

export interface UndoOptions {
  limits?: Partial<ReportLimits>;
  lockTimeoutSeconds?: number;
}

// A legacy grant an operator has edited: gate rules on it, or scheduled runs allowed. It is the
// operator's work as much as the planner's, so the undo leaves it (the apply leaves it too).
const EDITED = `(at.allow_proactive OR EXISTS (SELECT 1 FROM agent_toolkit_rules r WHERE r.agent_toolkit_id = at.id))`;
// Likewise a legacy toolkit whose members an operator edited: it no longer stands for its set.
// Sorted bytewise ("C"), as legacyToolSetKey sorts.
const SOUND = `(t.legacy_tool_set = (SELECT coalesce(string_agg(DISTINCT m::text COLLATE "C", ',' ORDER BY m::text COLLATE "C"), '') FROM unnest(t.member_tool_ids) m))`;

/**
 * @example
 * const report = await undoEnabledTools(sequelize, manifest);
 * report.changes; // { attachments_removed, toolkits_removed, ... }
 */
export async function undoEnabledTools(sequelize: Sequelize, manifest: ToolManifest, options: UndoOptions = {}): Promise<MigrationReport> {
  const started = performance.now();
  const report = new ReportBuilder(
    'undo',
    false,
    manifest
      .list()
      .map((t) => t.id)
      .sort(),
    options.limits,
  );
  const lockTimeout = options.lockTimeoutSeconds ?? 30;
  const listed = options.limits?.agents_listed ?? DEFAULT_REPORT_LIMITS.agents_listed;
  let agentsRead = 0;
  let agentsChanged = 0;
  try {
    await sequelize.transaction(async (transaction) => {
      await setLocal(sequelize, transaction, BATCH_WORK_SETTINGS);
      if (!(await hasToolgateTables(sequelize, transaction))) throw new SchemaNotMigratedError();
      await sequelize.query(`SET LOCAL lock_timeout = '${Math.max(1, Math.round(lockTimeout))}s'`, { transaction });
      await sequelize.query('LOCK TABLE agents, toolkits, agent_toolkits, agent_toolkit_rules IN SHARE ROW EXCLUSIVE MODE', {
        transaction,
      });
      agentsRead = await countAgents(sequelize, transaction);

      // Counted where they are: a million removed grants need not travel to be counted.
      const [removed] = await sequelize.query<{ grants: string; agents: string }>(
        `WITH gone AS (DELETE FROM agent_toolkits at WHERE at.origin = 'legacy' AND NOT ${EDITED} RETURNING at.agent_id)
         SELECT count(*) AS grants, count(DISTINCT agent_id) AS agents FROM gone`,
        { type: QueryTypes.SELECT, transaction },
      );
      agentsChanged = Number(removed?.agents ?? 0);
      const toolkits = await sequelize.query(
        `DELETE FROM toolkits t WHERE t.legacy_tool_set IS NOT NULL AND t.system_key IS NULL AND ${SOUND}
            AND NOT EXISTS (SELECT 1 FROM agent_toolkits at WHERE at.toolkit_id = t.id) RETURNING t.id`,
        { type: QueryTypes.SELECT, transaction },
      );
      report.count({ attachments_removed: Number(removed?.grants ?? 0), toolkits_removed: toolkits.length });

      const section: UndoSection = {
        kept_attachments: await sequelize.query(
          `SELECT at.id AS attachment_id, at.agent_id, t.name AS toolkit_name FROM agent_toolkits at JOIN toolkits t ON t.id = at.toolkit_id
            WHERE at.origin = 'legacy' ORDER BY at.id LIMIT $1`,
          { bind: [listed], type: QueryTypes.SELECT, transaction },
        ),
        kept_toolkits: (
          await sequelize.query<{ toolkit_id: number; name: string; attachments: string; members_edited: boolean }>(
            `SELECT t.id AS toolkit_id, t.name, count(at.id) AS attachments, NOT ${SOUND} AS members_edited
               FROM toolkits t LEFT JOIN agent_toolkits at ON at.toolkit_id = t.id
              WHERE t.legacy_tool_set IS NOT NULL GROUP BY t.id ORDER BY t.id`,
            { type: QueryTypes.SELECT, transaction },
          )
        ).map((t) => ({ ...t, attachments: Number(t.attachments) })),
      };
      report.undo(section);

      // What must hold now: no unedited legacy grant, and no legacy toolkit that nothing uses.
      const problems: ParityMismatch[] = [];
      const [left] = await sequelize.query<{ grants: string; unused: string }>(
        `SELECT (SELECT count(*) FROM agent_toolkits at WHERE at.origin = 'legacy' AND NOT ${EDITED}) AS grants,
                (SELECT count(*) FROM toolkits t WHERE t.legacy_tool_set IS NOT NULL AND t.system_key IS NULL AND ${SOUND}
                    AND NOT EXISTS (SELECT 1 FROM agent_toolkits at WHERE at.toolkit_id = t.id)) AS unused`,
        { type: QueryTypes.SELECT, transaction },
      );
      if (Number(left?.grants) > 0)
        problems.push({ agent_id: 0, tool_id: null, legacy: null, new: null, problem: `${left?.grants} unedited legacy grants remain` });
      if (Number(left?.unused) > 0)
        problems.push({ agent_id: 0, tool_id: null, legacy: null, new: null, problem: `${left?.unused} unused legacy toolkits remain` });
      report.verified({
        status: problems.length === 0 ? 'passed' : 'failed',
        over: 'database',
        agents_checked: agentsRead,
        tools: [],
        runs: [],
        mismatch_count: problems.length,
        mismatches: problems,
      });
      if (problems.length > 0) throw new ParityMismatchError(report.build());
    });
  } catch (err) {
    if ((err as { parent?: { code?: string } }).parent?.code === '55P03') throw new MigrationBusyError(lockTimeout);
    throw err;
  }
  const built = report.build({ committed: true, duration_ms: Math.round(performance.now() - started) });
  built.agents.read = agentsRead;
  built.agents.changed = agentsChanged;
  return built;
}
