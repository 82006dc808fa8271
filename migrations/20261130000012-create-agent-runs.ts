// Agent runs (SEMANTICS §10): one inbound message (in a thread) or one scheduled instruction (in
// none), with what the run was offered, the model's steps in order, and how it ended. A run is
// written when it starts (stopped is NULL while it runs) and completed when it ends.
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(`
    CREATE TABLE agent_runs (
      id SERIAL PRIMARY KEY,
      agent_id INTEGER NOT NULL CONSTRAINT agent_runs_agent_id_fkey REFERENCES agents (id) ON DELETE CASCADE,
      thread_id INTEGER CONSTRAINT agent_runs_thread_id_fkey REFERENCES threads (id) ON DELETE CASCADE,
      run VARCHAR(16) NOT NULL CONSTRAINT agent_runs_run_check CHECK (run IN ('sender', 'scheduled')),
      message JSONB NOT NULL,
      routing_key VARCHAR(320),
      tools_offered VARCHAR(64)[] NOT NULL,
      steps JSONB NOT NULL DEFAULT '[]',
      reply TEXT,
      stopped VARCHAR(16) CONSTRAINT agent_runs_stopped_check CHECK (stopped IN ('reply', 'max_steps', 'model_error')),
      error TEXT,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      completed_at TIMESTAMPTZ,
      -- A scheduled run has no thread and no sender; a sender run belongs to a thread.
      CONSTRAINT agent_runs_thread_of_sender_run CHECK ((run = 'sender') = (thread_id IS NOT NULL))
    );
    CREATE INDEX agent_runs_thread_id_idx ON agent_runs (thread_id, id);
    CREATE INDEX agent_runs_agent_id_idx ON agent_runs (agent_id, id);
    COMMENT ON TABLE agent_runs IS 'created by toolgate';
  `);
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query('DROP TABLE agent_runs');
}
