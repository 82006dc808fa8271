// Gate rules: allow/deny address patterns on one attachment, unique per (attachment, kind, pattern).
import type { QueryInterface } from 'sequelize';

type DataTypesModule = typeof import('sequelize');

export async function up(queryInterface: QueryInterface, Sequelize: DataTypesModule): Promise<void> {
  await queryInterface.createTable('agent_toolkit_rules', {
    id: { type: Sequelize.INTEGER, primaryKey: true, autoIncrement: true, allowNull: false },
    agent_toolkit_id: {
      type: Sequelize.INTEGER,
      allowNull: false,
      references: { model: 'agent_toolkits', key: 'id' },
      onDelete: 'CASCADE',
    },
    kind: { type: Sequelize.STRING(8), allowNull: false },
    pattern: { type: Sequelize.STRING(320), allowNull: false },
    created_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
    updated_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
  });
  await queryInterface.sequelize.query(`
    ALTER TABLE agent_toolkit_rules ADD CONSTRAINT agent_toolkit_rules_kind_check CHECK (kind IN ('allow', 'deny'));
    ALTER TABLE agent_toolkit_rules ADD CONSTRAINT agent_toolkit_rules_pattern_not_blank CHECK (pattern <> '');
  `);
  await queryInterface.addConstraint('agent_toolkit_rules', {
    type: 'unique',
    fields: ['agent_toolkit_id', 'kind', 'pattern'],
    name: 'agent_toolkit_rules_attachment_kind_pattern_key',
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.dropTable('agent_toolkit_rules');
}
