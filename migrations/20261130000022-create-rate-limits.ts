// The client routes' rate limit, shared by every instance on this database: one row per caller and
// window (the table rate-limiter-flexible's RateLimiterPostgres reads and writes: key, points used,
// when the window ends in epoch milliseconds). Expired rows are pruned by the instances.
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.sequelize.query(
      `CREATE TABLE toolgate_rate_limits (
         key varchar(255) PRIMARY KEY,
         points integer NOT NULL DEFAULT 0,
         expire bigint
       );
       CREATE INDEX toolgate_rate_limits_expire ON toolgate_rate_limits (expire);
       COMMENT ON TABLE toolgate_rate_limits IS 'created by toolgate';`,
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query('DROP TABLE toolgate_rate_limits');
}
