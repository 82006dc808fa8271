// An agent's escalation address: the person it copies when it passes on a request it cannot decide
// (SEMANTICS §11), as the seed's Sundae adds the shop's owner to the thread. Copying makes that
// person a participant of the thread, so their answer joins it. Null: the agent copies no one.
// On a legacy `agents` table the column is added like the adoption's own, marked as toolgate's,
// and down() takes away only a column it added.
import type { QueryInterface } from 'sequelize';
import { addMarkedColumns, dropMarkedColumns } from './lib/adopt-table';

const COLUMNS = { escalation_address: 'VARCHAR(320)' };

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction((transaction) => addMarkedColumns(sequelize, 'agents', COLUMNS, transaction));
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction((transaction) => dropMarkedColumns(sequelize, 'agents', Object.keys(COLUMNS), transaction));
}
