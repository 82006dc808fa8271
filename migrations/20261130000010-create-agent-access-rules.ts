// Agent access rules (SEMANTICS §9): allow/deny address patterns on the agent itself, deciding
// whether it handles a sender's message at all, before any tool is considered. Same grammar as the
// gate rules; unique per (agent, kind, pattern); gone with their agent.
import type { QueryInterface } from 'sequelize';

type DataTypesModule = typeof import('sequelize');

export async function up(queryInterface: QueryInterface, Sequelize: DataTypesModule): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.createTable(
      'agent_access_rules',
      {
        id: { type: Sequelize.INTEGER, primaryKey: true, autoIncrement: true, allowNull: false },
        agent_id: { type: Sequelize.INTEGER, allowNull: false, references: { model: 'agents', key: 'id' }, onDelete: 'CASCADE' },
        kind: { type: Sequelize.STRING(8), allowNull: false },
        pattern: { type: Sequelize.STRING(320), allowNull: false },
        created_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
        updated_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
      },
      { transaction },
    );
    await queryInterface.sequelize.query(
      `ALTER TABLE agent_access_rules ADD CONSTRAINT agent_access_rules_kind_check CHECK (kind IN ('allow', 'deny'));
       ALTER TABLE agent_access_rules ADD CONSTRAINT agent_access_rules_pattern_not_blank CHECK (pattern <> '');
       ALTER TABLE agent_access_rules ADD CONSTRAINT agent_access_rules_agent_kind_pattern_key UNIQUE (agent_id, kind, pattern);
       COMMENT ON TABLE agent_access_rules IS 'created by toolgate';`,
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.dropTable('agent_access_rules');
}
