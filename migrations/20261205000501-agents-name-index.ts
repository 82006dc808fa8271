// The agents list pages by name (docs/HTTP.md, "Pages"): each page starts after the last name it
// showed, and a search reads the names that begin with what an operator typed. Both read this index,
// not every agent: names in lower case under the C collation (byte order, so a prefix is one range
// of it), then the id, which orders agents of one name.
//
// Built in the migration's transaction, as the tool-call status index is (see that migration): an
// operator with a very large table builds it CONCURRENTLY beforehand under this name
// (docs/MIGRATING.md); the migration then keeps it, and replaces one a failed build left invalid.
import type { QueryInterface } from 'sequelize';

// Named toolgate_ as every index toolgate adds to a table the legacy application may own.
const INDEX = 'agents_toolgate_name_id_idx';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.sequelize.query(
      `DO $$ BEGIN
         IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('${INDEX}') AND NOT indisvalid) THEN
           DROP INDEX ${INDEX};
         END IF;
       END $$;
       CREATE INDEX IF NOT EXISTS ${INDEX} ON agents ((lower(name) COLLATE "C"), id);`,
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(`DROP INDEX IF EXISTS ${INDEX}`);
}
