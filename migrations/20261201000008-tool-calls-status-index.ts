// The tool-call listing filtered by status (`?status=denied`, the dashboard's refusals view) read
// every record of the agent before it sorted: past about 30,000 records for one agent its cost
// crossed jit_above_cost (docs/PERFORMANCE.md). With this index it reads only the newest matches.
//
// Built in the migration's transaction, which holds writes to tool_calls while it builds (seconds
// per ten million records). Not CONCURRENTLY: that waits for every open snapshot, among them the
// other instances waiting on the migration lock, so it would never finish. An operator with a very
// large table builds it CONCURRENTLY beforehand under this name (docs/MIGRATING.md); the migration
// then keeps it, and replaces one that a failed concurrent build left invalid.
import type { QueryInterface } from 'sequelize';

// Named toolgate_ as every index toolgate adds to a table the legacy application may own.
const INDEX = 'tool_calls_toolgate_status_id_idx';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.sequelize.query(
      `DO $$ BEGIN
         IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('${INDEX}') AND NOT indisvalid) THEN
           DROP INDEX ${INDEX};
         END IF;
       END $$;
       CREATE INDEX IF NOT EXISTS ${INDEX} ON tool_calls (agent_id, status, id);`,
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(`DROP INDEX IF EXISTS ${INDEX}`);
}
