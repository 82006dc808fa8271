// A run may end `error` (toolgate's own work failed after a tool had run: the answer still says
// what ran) or `interrupted` (its instance died mid-run and the sweeper closed it), and a tool-call
// record `interrupted` (a `started` record whose instance died: its tool's outcome is unknown, and it
// is never run again). SEMANTICS §13.
//
// down() restores the older checks; what they cannot hold becomes the nearest older value: a run's
// `error` or `interrupted` is `model_error` (it stopped without a reply), a record's `interrupted`
// is a `failure` that says it never completed.
import type { QueryInterface, Transaction } from 'sequelize';

const RECORD_CHECKS = ['tool_calls_status_check', 'tool_calls_toolgate_status_check'];
const RECORDS_BEFORE = "'started', 'success', 'failure', 'denied', 'skipped', 'pending_approval'";
const RECORDS_AFTER = "'started', 'success', 'failure', 'denied', 'skipped', 'pending_approval', 'interrupted'";

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `ALTER TABLE agent_runs DROP CONSTRAINT agent_runs_stopped_check,
         ADD CONSTRAINT agent_runs_stopped_check CHECK (stopped IN ('reply', 'max_steps', 'model_error', 'error', 'interrupted'))`,
      { transaction },
    );
    await recordChecks(queryInterface, RECORDS_AFTER, transaction);
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `UPDATE agent_runs SET stopped = 'model_error' WHERE stopped IN ('error', 'interrupted');
       ALTER TABLE agent_runs DROP CONSTRAINT agent_runs_stopped_check,
         ADD CONSTRAINT agent_runs_stopped_check CHECK (stopped IN ('reply', 'max_steps', 'model_error'));
       UPDATE tool_calls SET status = 'failure', error = 'never completed: its instance stopped while the tool ran' WHERE status = 'interrupted';`,
      { transaction },
    );
    await recordChecks(queryInterface, RECORDS_BEFORE, transaction);
  });
}

async function recordChecks(queryInterface: QueryInterface, statuses: string, transaction: Transaction): Promise<void> {
  const sequelize = queryInterface.sequelize;
  const [rows] = await sequelize.query(`SELECT conname FROM pg_constraint WHERE conrelid = 'tool_calls'::regclass AND conname IN (:names)`, {
    replacements: { names: RECORD_CHECKS },
    transaction,
  });
  for (const { conname } of rows as { conname: string }[]) {
    // NULL passes a CHECK: rows of an adopted legacy table may have no status.
    await sequelize.query(`ALTER TABLE tool_calls DROP CONSTRAINT ${conname}, ADD CONSTRAINT ${conname} CHECK (status IN (${statuses}))`, { transaction });
  }
}
