// Agents: the records toolkits attach to. `enabled_tools` is the legacy comma string, kept as it
// is so that a migrated deployment can always be compared with (and rolled back to) the old check.
//
// A database the legacy application made already has `agents`: it is adopted in place. Its id and
// name must be there; the columns toolgate lacks are added (marked 'added by toolgate'), and no
// legacy column or row is touched. down() drops the table only when this migration created it
// (table comment 'created by toolgate'), else only the columns it added.
import type { QueryInterface } from 'sequelize';
import {
  adoptTable,
  columnsOf,
  undoAdoption,
  isUniqueKey,
  markCreated,
  type AdoptionSpec,
} from './lib/adopt-table';

type DataTypesModule = typeof import('sequelize');

const LEGACY_AGENTS: AdoptionSpec = {
  table: 'agents',
  required: { id: 'integer', name: 'text' },
  typed: { description: 'text', system_prompt: 'text', enabled_tools: 'text', created_at: 'timestamp', updated_at: 'timestamp' },
  written: ['name', 'description', 'system_prompt', 'enabled_tools', 'created_at', 'updated_at'],
  missing: {
    description: 'TEXT',
    system_prompt: 'TEXT',
    enabled_tools: 'TEXT',
    created_at: 'TIMESTAMPTZ NOT NULL DEFAULT now()',
    updated_at: 'TIMESTAMPTZ NOT NULL DEFAULT now()',
  },
};

export async function up(queryInterface: QueryInterface, Sequelize: DataTypesModule): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    const columns = await columnsOf(sequelize, 'agents', transaction);
    if (columns.length > 0) {
      // Attachments and tool calls reference agents(id): without a unique id they cannot.
      if (columns.some((c) => c.name === 'id') && !(await isUniqueKey(sequelize, 'agents', 'id', transaction))) {
        throw new Error('Cannot adopt the legacy "agents" table: its "id" column is not a primary key or unique. Nothing was changed.');
      }
      await adoptTable(sequelize, LEGACY_AGENTS, columns, transaction);
      return;
    }
    await queryInterface.createTable(
      'agents',
      {
        id: { type: Sequelize.INTEGER, primaryKey: true, autoIncrement: true, allowNull: false },
        name: { type: Sequelize.STRING(200), allowNull: false },
        description: { type: Sequelize.TEXT, allowNull: true },
        system_prompt: { type: Sequelize.TEXT, allowNull: true },
        enabled_tools: { type: Sequelize.TEXT, allowNull: true },
        created_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
        updated_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
      },
      { transaction },
    );
    await markCreated(sequelize, 'agents', transaction);
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction((transaction) => undoAdoption(sequelize, 'agents', [], transaction));
}
