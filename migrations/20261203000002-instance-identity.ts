// Who each instance is, beside its heartbeat: the machine and process it runs in, and how long its
// heartbeat may be silent before it is taken for dead (its own staleAfterMs, which instances may
// set differently). The schema's undo reads them to refuse while an instance is alive, and to name
// it so that an operator can find it and stop it. Null for an instance of an earlier version.
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(
    `ALTER TABLE toolgate_instances ADD COLUMN hostname VARCHAR(255), ADD COLUMN pid INTEGER, ADD COLUMN stale_after_ms INTEGER`,
  );
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(`ALTER TABLE toolgate_instances DROP COLUMN hostname, DROP COLUMN pid, DROP COLUMN stale_after_ms`);
}
