// Documents: the texts an agent answers from. A `documents` table left by the legacy Python app is
// adopted in place: toolgate adds only the columns it lacks (nullable or with a default) and never
// touches a legacy column or row.
//
// Bookkeeping, so that down() undoes exactly what up() did (src/legacy/adopt-table.ts): a table
// this migration creates carries the comment 'created by toolgate', a column it adds to a legacy
// table the column comment 'added by toolgate'. down() drops the table only in the first case,
// else only those columns and this migration's own index.
import type { QueryInterface } from 'sequelize';
import { adoptTable, columnsOf, markCreated, undoAdoption, type AdoptionSpec } from './lib/adopt-table';

const ADOPTED_INDEX = 'documents_toolgate_agent_id_idx';

const LEGACY_DOCUMENTS: AdoptionSpec = {
  table: 'documents',
  // Chunks reference documents by an integer id (migration 0007).
  required: { id: 'integer' },
  typed: { agent_id: 'integer', title: 'text', content: 'text', created_at: 'timestamp' },
  written: ['agent_id', 'title', 'content', 'created_at'],
  missing: {
    agent_id: 'INTEGER CONSTRAINT documents_toolgate_agent_id_fkey REFERENCES agents (id) ON DELETE CASCADE',
    title: 'VARCHAR(500)',
    content: 'TEXT',
    created_at: 'TIMESTAMPTZ NOT NULL DEFAULT now()',
  },
};

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    const run = (sql: string) => sequelize.query(sql, { transaction });
    const columns = await columnsOf(sequelize, 'documents', transaction);
    if (columns.length > 0) {
      const added = await adoptTable(sequelize, LEGACY_DOCUMENTS, columns, transaction);
      // Legacy rows named by file keep that name as their title; the copy lives in toolgate's column.
      if (added.includes('title') && columns.some((c) => c.name === 'filename')) {
        await run('UPDATE documents SET title = left(filename::text, 500) WHERE filename IS NOT NULL');
      }
      await run(`CREATE INDEX ${ADOPTED_INDEX} ON documents (agent_id, id)`);
      return;
    }
    await run(`
      CREATE TABLE documents (
        id SERIAL PRIMARY KEY,
        agent_id INTEGER NOT NULL CONSTRAINT documents_agent_id_fkey REFERENCES agents (id) ON DELETE CASCADE,
        title VARCHAR(500) NOT NULL,
        content TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
      );
      CREATE INDEX documents_agent_id_idx ON documents (agent_id, id);
    `);
    await markCreated(sequelize, 'documents', transaction);
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction((transaction) => undoAdoption(sequelize, 'documents', [ADOPTED_INDEX], transaction));
}
