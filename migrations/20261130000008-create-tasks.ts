// Tasks: work items `task_creator` files from a message's action items, at most once per
// (agent, source_key, title), so a retried workflow never duplicates a task. source_key is the
// message's Message-ID, or for a message without one `sha256:<hex>` of its content
// (src/tasks/source-key.ts). A `tasks` table left by the legacy Python app is adopted in place:
// toolgate adds only the columns it lacks (nullable or with a default) and never touches a legacy
// column or row.
//
// Bookkeeping, so that down() undoes exactly what up() did (src/legacy/adopt-table.ts): a table
// this migration creates carries the comment 'created by toolgate', a column it adds to a legacy
// table the column comment 'added by toolgate'. down() drops the table only in the first case,
// else only those columns and this migration's own indexes.
import type { QueryInterface } from 'sequelize';
import {
  adoptTable,
  columnsOf,
  undoAdoption,
  markCreated,
  type AdoptionSpec,
  type ColumnInfo,
} from './lib/adopt-table';

const LEGACY_TASKS: AdoptionSpec = {
  table: 'tasks',
  required: { id: 'integer' },
  typed: {
    agent_id: 'integer',
    title: 'text',
    status: 'text',
    due: 'text',
    source_message_id: 'text',
    source_key: 'text',
    created_at: 'timestamp',
  },
  written: ['agent_id', 'title', 'status', 'due', 'source_message_id', 'source_key', 'created_at'],
  missing: {
    agent_id: 'INTEGER CONSTRAINT tasks_toolgate_agent_id_fkey REFERENCES agents (id) ON DELETE CASCADE',
    title: 'VARCHAR(200)',
    status: "VARCHAR(32) NOT NULL DEFAULT 'pending'",
    due: 'TEXT',
    source_message_id: 'TEXT',
    source_key: 'TEXT',
    created_at: 'TIMESTAMPTZ NOT NULL DEFAULT now()',
  },
};

// Names of toolgate's own, on a created and an adopted table alike. Legacy rows have no
// source_key, and NULLs never collide: the key binds toolgate's tasks only.
const OWN_INDEXES = `
  CREATE UNIQUE INDEX tasks_toolgate_source_key ON tasks (agent_id, source_key, title);
  CREATE INDEX tasks_toolgate_agent_id_idx ON tasks (agent_id, id);`;

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    const run = (sql: string) => sequelize.query(sql, { transaction });
    const columns = await columnsOf(sequelize, 'tasks', transaction);
    if (columns.length > 0) {
      const added = await adoptTable(sequelize, LEGACY_TASKS, columns, transaction);
      // The legacy due date, read through toolgate's column; the copy lives in that column only.
      const dueDate = columns.find((c) => c.name === 'due_date');
      if (added.includes('due') && dueDate) await run(`UPDATE tasks SET due = ${dueText(dueDate)} WHERE due_date IS NOT NULL`);
      await run(OWN_INDEXES);
      return;
    }
    await run(`
      CREATE TABLE tasks (
        id SERIAL PRIMARY KEY,
        agent_id INTEGER NOT NULL CONSTRAINT tasks_agent_id_fkey REFERENCES agents (id) ON DELETE CASCADE,
        title VARCHAR(200) NOT NULL,
        status VARCHAR(32) NOT NULL DEFAULT 'pending',
        due TEXT,
        source_message_id TEXT,
        source_key TEXT,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
      );
      ${OWN_INDEXES}
    `);
    await markCreated(sequelize, 'tasks', transaction);
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction((transaction) => undoAdoption(sequelize, 'tasks', ['tasks_toolgate_source_key', 'tasks_toolgate_agent_id_idx'], transaction));
}

/** ISO 8601 for a date or timestamp column (the date alone at midnight), the text as is otherwise. */
function dueText(column: ColumnInfo): string {
  if (column.type === 'date') return `to_char(due_date, 'YYYY-MM-DD')`;
  if (column.type.startsWith('timestamp')) {
    return `CASE WHEN due_date::time = '00:00' THEN to_char(due_date, 'YYYY-MM-DD')
                 ELSE to_char(due_date, 'YYYY-MM-DD"T"HH24:MI:SS') END`;
  }
  return 'due_date::text';
}
