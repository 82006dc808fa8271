// What the retention (TOOLGATE_RETENTION) keeps track of between sweeps (docs/SEMANTICS.md §8, §16):
// - toolgate_retired_partitions: a record table's partition the sweeper has begun to drop. It is
//   detached CONCURRENTLY (no ACCESS EXCLUSIVE lock on the record table), then dropped; a sweep
//   stopped between the two (a detach left pending, a detached table not yet dropped) leaves its row
//   here, and the next sweep finishes it. The partition is named by its oid, so nothing else of the
//   database is ever taken for it.
// - decision_log_horizon: one row, the position (xact_id, position) of the newest decision-log entry
//   the retention removed. Entries go in log order, so every entry up to it is gone and every one
//   past it kept: a reader whose cursor lies before it is told so (410), never given a silent gap.
// The decision log itself, and the trigger that writes it, are as migration 20261205000301 made them.
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `CREATE TABLE toolgate_retired_partitions (
         partition OID PRIMARY KEY,
         parent VARCHAR(63) NOT NULL,
         name VARCHAR(63) NOT NULL,
         lo TIMESTAMPTZ,
         hi TIMESTAMPTZ NOT NULL,
         detached_at TIMESTAMPTZ NOT NULL DEFAULT now()
       );
       COMMENT ON TABLE toolgate_retired_partitions IS 'created by toolgate';
       CREATE TABLE decision_log_horizon (
         only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
         xact_id XID8 NOT NULL DEFAULT '0',
         position BIGINT NOT NULL DEFAULT 0,
         trimmed_at TIMESTAMPTZ
       );
       COMMENT ON TABLE decision_log_horizon IS 'created by toolgate';
       INSERT INTO decision_log_horizon DEFAULT VALUES;`,
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query('DROP TABLE decision_log_horizon; DROP TABLE toolgate_retired_partitions;');
}
