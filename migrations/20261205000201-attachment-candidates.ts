// Candidate terms on an attachment, and what they would have decided (SEMANTICS §15, shadow).
// - agent_toolkits.candidate: the terms an operator is trying beside the live ones, as given (only
//   the fields named: rules, caps, approvers, allow_proactive; the others follow the live terms);
//   candidate_at: when they were set, from which the shadow's counts run. Runs never grant by them.
//   Setting or dropping them raises the agent's policy version like any attachment edit (the
//   policy triggers read every UPDATE), so every instance resolves the candidate from then on.
// - agent_runs.shadow, tool_calls.shadow: where a candidate decided otherwise than the live terms,
//   what it would have decided (a run: the tools it would add and remove; a call: what it would
//   have been, and why). Null everywhere else. The partial indexes serve the shadow's counts.
// tool_calls may be a legacy table adopted in place: its column is added and marked as the
// adoption's are, and its index is named toolgate_, as everything toolgate adds to such a table.
import type { QueryInterface } from 'sequelize';
import { addMarkedColumns, dropMarkedColumns } from './lib/adopt-table';

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await addMarkedColumns(sequelize, 'tool_calls', { shadow: 'JSONB' }, transaction);
    await sequelize.query(
      `ALTER TABLE agent_toolkits ADD COLUMN candidate JSONB, ADD COLUMN candidate_at TIMESTAMPTZ,
         ADD CONSTRAINT agent_toolkits_candidate_at_check CHECK ((candidate IS NULL) = (candidate_at IS NULL));
       ALTER TABLE agent_runs ADD COLUMN shadow JSONB;
       CREATE INDEX agent_runs_shadow_idx ON agent_runs (agent_id, created_at) WHERE shadow IS NOT NULL;
       CREATE INDEX tool_calls_toolgate_shadow_idx ON tool_calls (agent_id, created_at) WHERE shadow IS NOT NULL;`,
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `DROP INDEX tool_calls_toolgate_shadow_idx;
       DROP INDEX agent_runs_shadow_idx;
       ALTER TABLE agent_runs DROP COLUMN shadow;
       ALTER TABLE agent_toolkits DROP CONSTRAINT agent_toolkits_candidate_at_check, DROP COLUMN candidate_at, DROP COLUMN candidate;`,
      { transaction },
    );
    await dropMarkedColumns(sequelize, 'tool_calls', ['shadow'], transaction);
  });
}
