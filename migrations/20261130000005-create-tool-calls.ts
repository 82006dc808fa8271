// Tool calls: one record per execution, refusal or skip (SEMANTICS §8), newest read first.
import type { QueryInterface } from 'sequelize';

type DataTypesModule = typeof import('sequelize');

export async function up(queryInterface: QueryInterface, Sequelize: DataTypesModule): Promise<void> {
  await queryInterface.createTable('tool_calls', {
    id: { type: Sequelize.BIGINT, primaryKey: true, autoIncrement: true, allowNull: false },
    agent_id: {
      type: Sequelize.INTEGER,
      allowNull: false,
      references: { model: 'agents', key: 'id' },
      onDelete: 'CASCADE',
    },
    tool_id: { type: Sequelize.STRING(64), allowNull: false },
    tool_name: { type: Sequelize.STRING(100), allowNull: false },
    status: { type: Sequelize.STRING(16), allowNull: false },
    run: { type: Sequelize.STRING(16), allowNull: false },
    routing_key: { type: Sequelize.STRING(320), allowNull: true },
    duration_ms: { type: Sequelize.INTEGER, allowNull: false, defaultValue: 0 },
    error: { type: Sequelize.TEXT, allowNull: true },
    created_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
  });
  await queryInterface.sequelize.query(`
    ALTER TABLE tool_calls ADD CONSTRAINT tool_calls_status_check
      CHECK (status IN ('success', 'failure', 'denied', 'skipped'));
    ALTER TABLE tool_calls ADD CONSTRAINT tool_calls_run_check CHECK (run IN ('sender', 'scheduled'));
  `);
  await queryInterface.addIndex('tool_calls', ['agent_id', 'id'], { name: 'tool_calls_agent_id_id_idx' });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.dropTable('tool_calls');
}
