// Tool-call records name what decided them (SEMANTICS §16): `policy_version`, the agent's policy
// version the call was decided under (its own version plus the policy epoch, as
// toolgate_policy_version() reads it), and for a `denied` record `reason`, one of the stable words of
// DENIAL_REASONS (models/tool-call.ts). Both nullable: records written before this migration have
// neither, and a record that is not a refusal has no reason.
//
// tool_calls may be a legacy table adopted in place: the columns are added and marked as the
// adoption's are, so down() drops exactly these. No check on `reason`: a reason added later is a
// code change, not a schema change, and the API's schema lists the words.
import type { QueryInterface } from 'sequelize';
import { addMarkedColumns, dropMarkedColumns } from './lib/adopt-table';

const TOOL_CALL_COLUMNS = { policy_version: 'BIGINT', reason: 'VARCHAR(32)' };

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await addMarkedColumns(sequelize, 'tool_calls', TOOL_CALL_COLUMNS, transaction);
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await dropMarkedColumns(sequelize, 'tool_calls', Object.keys(TOOL_CALL_COLUMNS), transaction);
  });
}
