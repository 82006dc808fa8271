// The dashboard's sign-in sessions, kept in PostgreSQL so that they survive a restart and every
// instance on the database shares them. The columns are connect-pg-simple's (sid, sess, expire).
import type { QueryInterface } from 'sequelize';

type DataTypesModule = typeof import('sequelize');

export async function up(queryInterface: QueryInterface, Sequelize: DataTypesModule): Promise<void> {
  await queryInterface.createTable('admin_sessions', {
    sid: { type: Sequelize.STRING(255), primaryKey: true, allowNull: false },
    sess: { type: Sequelize.JSON, allowNull: false },
    expire: { type: 'TIMESTAMP(6)', allowNull: false },
  });
  await queryInterface.addIndex('admin_sessions', ['expire'], { name: 'admin_sessions_expire_idx' });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.dropTable('admin_sessions');
}
