// Attachments: the grant of one toolkit to one agent, and the only place permission lives.
// Deleting the agent or the toolkit removes the grant with it.
import type { QueryInterface } from 'sequelize';

type DataTypesModule = typeof import('sequelize');

export async function up(queryInterface: QueryInterface, Sequelize: DataTypesModule): Promise<void> {
  await queryInterface.createTable('agent_toolkits', {
    id: { type: Sequelize.INTEGER, primaryKey: true, autoIncrement: true, allowNull: false },
    agent_id: {
      type: Sequelize.INTEGER,
      allowNull: false,
      references: { model: 'agents', key: 'id' },
      onDelete: 'CASCADE',
    },
    toolkit_id: {
      type: Sequelize.INTEGER,
      allowNull: false,
      references: { model: 'toolkits', key: 'id' },
      onDelete: 'CASCADE',
    },
    allow_proactive: { type: Sequelize.BOOLEAN, allowNull: false, defaultValue: false },
    // Who made the grant: an operator, the Default Tools attach on agent create, or the
    // enabled_tools planner (whose undo removes exactly its own).
    origin: { type: Sequelize.STRING(16), allowNull: false, defaultValue: 'operator' },
    created_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
    updated_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
  });
  await queryInterface.addConstraint('agent_toolkits', {
    type: 'unique',
    fields: ['agent_id', 'toolkit_id'],
    name: 'agent_toolkits_agent_id_toolkit_id_key',
  });
  await queryInterface.addIndex('agent_toolkits', ['toolkit_id'], { name: 'agent_toolkits_toolkit_id_idx' });
  await queryInterface.sequelize.query(
    "ALTER TABLE agent_toolkits ADD CONSTRAINT agent_toolkits_origin_check CHECK (origin IN ('operator', 'default', 'legacy'))",
  );
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.dropTable('agent_toolkits');
}
