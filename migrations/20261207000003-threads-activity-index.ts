// An agent's threads page by their activity (GET /agents/:id/threads, docs/HTTP.md "Pages"): each
// page starts after the last thread it showed, newest activity first, then the newest thread. This
// index holds that order per agent, so a page is one range of it, never a sort of every thread.
//
// Built in the migration's transaction, as the agents' name index is: an operator with very many
// threads builds it CONCURRENTLY beforehand under this name (docs/MIGRATING.md); the migration then
// keeps it, and replaces one a failed build left invalid.
import type { QueryInterface } from 'sequelize';
import { keepOrBuildIndex } from './lib/prebuilt-index';

const INDEX = 'threads_agent_activity_idx';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.sequelize.query(
      keepOrBuildIndex(INDEX, `CREATE INDEX IF NOT EXISTS ${INDEX} ON threads (agent_id, updated_at DESC, id DESC)`),
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(`DROP INDEX IF EXISTS ${INDEX}`);
}
