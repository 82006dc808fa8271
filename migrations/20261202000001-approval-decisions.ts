// Decisions are the approver's act (SEMANTICS §12a), so they are read by toolgate, not a model:
// - approval_requests.code: the request's decision code, which an approver writes after "approve" or
//   "deny" to decide exactly that request. Requests filed before get one now (hex, a subset of the
//   alphabet new codes use, always with a digit).
// - agent_runs.decisions: what toolgate read in the run's message, before the model ran: the requests
//   it decided and those it left pending, so the thread's history and a redelivery say so.
// - agent_runs.stopped may be `auto_reply`: an automatic reply (RFC 3834) is kept in its thread, but
//   runs no model and no tool, and decides nothing. down() makes it `model_error`, the older value for
//   a run that stopped without a reply.
import type { QueryInterface } from 'sequelize';

const STOPPED_BEFORE = "'reply', 'max_steps', 'model_error', 'error', 'interrupted'";
const STOPPED_AFTER = `${STOPPED_BEFORE}, 'auto_reply'`;

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.sequelize.query(
      `ALTER TABLE approval_requests ADD COLUMN code VARCHAR(8);
       UPDATE approval_requests SET code = upper(substr(md5(random()::text || id::text), 1, 7)) || (id % 10)::text;
       ALTER TABLE approval_requests ALTER COLUMN code SET NOT NULL;
       ALTER TABLE agent_runs ADD COLUMN decisions JSONB,
         DROP CONSTRAINT agent_runs_stopped_check,
         ADD CONSTRAINT agent_runs_stopped_check CHECK (stopped IN (${STOPPED_AFTER}));`,
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.sequelize.query(
      `UPDATE agent_runs SET stopped = 'model_error' WHERE stopped = 'auto_reply';
       ALTER TABLE agent_runs DROP COLUMN decisions,
         DROP CONSTRAINT agent_runs_stopped_check,
         ADD CONSTRAINT agent_runs_stopped_check CHECK (stopped IN (${STOPPED_BEFORE}));
       ALTER TABLE approval_requests DROP COLUMN code;`,
      { transaction },
    );
  });
}
