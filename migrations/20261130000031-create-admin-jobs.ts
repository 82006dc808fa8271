// Long operations started from the dashboard (the enabled_tools migration's dry run, apply and
// undo): their progress and outcome, in PostgreSQL so that any instance can show them.
import type { QueryInterface } from 'sequelize';

type DataTypesModule = typeof import('sequelize');

export async function up(queryInterface: QueryInterface, Sequelize: DataTypesModule): Promise<void> {
  await queryInterface.createTable('admin_jobs', {
    id: { type: Sequelize.INTEGER, primaryKey: true, autoIncrement: true, allowNull: false },
    kind: { type: Sequelize.STRING(32), allowNull: false },
    options: { type: Sequelize.JSONB, allowNull: false, defaultValue: {} },
    status: { type: Sequelize.STRING(16), allowNull: false },
    progress: { type: Sequelize.JSONB, allowNull: true },
    result: { type: Sequelize.JSONB, allowNull: true },
    error: { type: Sequelize.TEXT, allowNull: true },
    created_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
    updated_at: { type: Sequelize.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
  });
  await queryInterface.sequelize.query(`
    ALTER TABLE admin_jobs ADD CONSTRAINT admin_jobs_status_check CHECK (status IN ('running', 'succeeded', 'failed'));
  `);
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.dropTable('admin_jobs');
}
