// What a preview (SEMANTICS §15) needs to replay recorded traffic that the records did not hold:
// - tool_calls.dispatch: how the call came to dispatch, which decides what a refusal or an approval
//   does with it: `call` (a model's or a client's call: one needing approval is filed as a request),
//   `step` (a route's own step: refused), `optional` (a step left out when not granted: skipped),
//   `approved` (an approved request's one execution). NULL on rows written before: not replayed.
// - tool_calls.run_key and agent_runs.run_key: the run a call was made in, so calls count as runs.
// tool_calls may be a legacy table adopted in place: its columns are added and marked as the
// adoption's are, and what toolgate adds to it is named toolgate_, so down() takes away exactly that.
// - indexes by agent and time, so a preview reads the window's rows of the agents a change reaches,
//   not the whole table.
import type { QueryInterface } from 'sequelize';
import { addMarkedColumns, dropMarkedColumns } from './lib/adopt-table';

const TOOL_CALL_COLUMNS = {
  dispatch: "VARCHAR(16) CONSTRAINT tool_calls_toolgate_dispatch_check CHECK (dispatch IN ('call', 'step', 'optional', 'approved'))",
  run_key: 'UUID',
};

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await addMarkedColumns(sequelize, 'tool_calls', TOOL_CALL_COLUMNS, transaction);
    await sequelize.query(
      `CREATE INDEX tool_calls_toolgate_agent_created_idx ON tool_calls (agent_id, created_at);
       ALTER TABLE agent_runs ADD COLUMN run_key UUID;
       CREATE INDEX agent_runs_agent_created_idx ON agent_runs (agent_id, created_at);`,
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `DROP INDEX agent_runs_agent_created_idx;
       ALTER TABLE agent_runs DROP COLUMN run_key;
       DROP INDEX tool_calls_toolgate_agent_created_idx;`,
      { transaction },
    );
    await dropMarkedColumns(sequelize, 'tool_calls', Object.keys(TOOL_CALL_COLUMNS), transaction);
  });
}
