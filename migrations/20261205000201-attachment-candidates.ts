// Candidate terms on an attachment, and what they would have decided (SEMANTICS §15, shadow).
// - agent_toolkits.candidate: the terms an operator is trying beside the live ones, as given (only
//   the fields named: rules, caps, approvers, allow_proactive; the others follow the live terms);
//   candidate_at: when they were set, from which the shadow's counts run. Runs never grant by them.
//   Setting or dropping them raises the agent's policy version like any attachment edit (the
//   policy triggers read every UPDATE), so every instance resolves the candidate from then on.
// - agent_runs.shadow, tool_calls.shadow: where a candidate decided otherwise than the live terms,
//   what it would have decided (a run: the tools it would add and remove; a call: what it would
//   have been, and why). Null everywhere else. The partial indexes serve the shadow's counts.
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.sequelize.query(
      `ALTER TABLE agent_toolkits ADD COLUMN candidate JSONB, ADD COLUMN candidate_at TIMESTAMPTZ,
         ADD CONSTRAINT agent_toolkits_candidate_at_check CHECK ((candidate IS NULL) = (candidate_at IS NULL));
       ALTER TABLE agent_runs ADD COLUMN shadow JSONB;
       ALTER TABLE tool_calls ADD COLUMN shadow JSONB;
       CREATE INDEX agent_runs_shadow_idx ON agent_runs (agent_id, created_at) WHERE shadow IS NOT NULL;
       CREATE INDEX tool_calls_shadow_idx ON tool_calls (agent_id, created_at) WHERE shadow IS NOT NULL;`,
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.sequelize.query(
      `DROP INDEX tool_calls_shadow_idx;
       DROP INDEX agent_runs_shadow_idx;
       ALTER TABLE tool_calls DROP COLUMN shadow;
       ALTER TABLE agent_runs DROP COLUMN shadow;
       ALTER TABLE agent_toolkits DROP CONSTRAINT agent_toolkits_candidate_at_check, DROP COLUMN candidate_at, DROP COLUMN candidate;`,
      { transaction },
    );
  });
}
