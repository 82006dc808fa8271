// Threads: one conversation of an agent with its correspondents. Each inbound message handled in
// it is an agent run (next migration); the model sees the thread's earlier runs as history.
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(`
    CREATE TABLE threads (
      id SERIAL PRIMARY KEY,
      agent_id INTEGER NOT NULL CONSTRAINT threads_agent_id_fkey REFERENCES agents (id) ON DELETE CASCADE,
      subject TEXT,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE INDEX threads_agent_id_idx ON threads (agent_id, id);
    COMMENT ON TABLE threads IS 'created by toolgate';
  `);
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query('DROP TABLE threads');
}
