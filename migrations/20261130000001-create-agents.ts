// Agents: the records toolkits attach to. `enabled_tools` is the legacy comma string, kept as it
// is so that a migrated deployment can always be compared with (and rolled back to) the old check.
import type { QueryInterface } from 'sequelize';

type DataTypesModule = typeof import('sequelize');

export async function up(queryInterface: QueryInterface, Sequelize: DataTypesModule): Promise<void> {
  await queryInterface.createTable('agents', {
    id: { type: Sequelize.INTEGER, primaryKey: true, autoIncrement: true, allowNull: false },
    name: { type: Sequelize.STRING(200), allowNull: false },
    description: { type: Sequelize.TEXT, allowNull: true },
    system_prompt: { type: Sequelize.TEXT, allowNull: true },
    enabled_tools: { type: Sequelize.TEXT, allowNull: true },
    created_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
    updated_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.dropTable('agents');
}
