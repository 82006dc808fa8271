// Threads bound to their participants (SEMANTICS §11): a thread's history is shared context, so who
// may write into it is part of the gate.
// - threads.reference: the opaque, unguessable name clients use (128 random bits, 122 for the
//   threads that existed before, named here from gen_random_uuid()); the integer id stays internal.
// - thread_participants: the routing keys a thread's conversation holds (its messages' From, To,
//   Cc and Reply-To, and the addresses the agent's replies went to).
// - agent_message_ids: every Message-ID an agent has seen or written, and its thread, so a reply's
//   In-Reply-To or References finds the thread as mail does.
// - agent_runs: the reply's own Message-ID and addressees, and why a message that named a thread
//   was started in a new one.
// The threads of an older database get their senders as participants (computed here with the same
// routing key function the service uses), so a conversation under way carries on.
import { QueryTypes, type QueryInterface } from 'sequelize';
import { routingKeyOf } from '../src/core/routing-key';

const BATCH = 1000;

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `ALTER TABLE threads ADD COLUMN reference VARCHAR(64);
       UPDATE threads SET reference = 'thr_' || replace(gen_random_uuid()::text, '-', '');
       ALTER TABLE threads ALTER COLUMN reference SET NOT NULL;
       ALTER TABLE threads ADD CONSTRAINT threads_reference_key UNIQUE (reference);
       CREATE TABLE thread_participants (
         thread_id INTEGER NOT NULL CONSTRAINT thread_participants_thread_id_fkey REFERENCES threads (id) ON DELETE CASCADE,
         routing_key VARCHAR(320) NOT NULL,
         CONSTRAINT thread_participants_pkey PRIMARY KEY (thread_id, routing_key)
       );
       COMMENT ON TABLE thread_participants IS 'created by toolgate';
       CREATE TABLE agent_message_ids (
         agent_id INTEGER NOT NULL CONSTRAINT agent_message_ids_agent_id_fkey REFERENCES agents (id) ON DELETE CASCADE,
         message_id VARCHAR(998) NOT NULL,
         thread_id INTEGER NOT NULL CONSTRAINT agent_message_ids_thread_id_fkey REFERENCES threads (id) ON DELETE CASCADE,
         run_id INTEGER NOT NULL CONSTRAINT agent_message_ids_run_id_fkey REFERENCES agent_runs (id) ON DELETE CASCADE,
         origin VARCHAR(8) NOT NULL CONSTRAINT agent_message_ids_origin_check CHECK (origin IN ('inbound', 'reply')),
         CONSTRAINT agent_message_ids_pkey PRIMARY KEY (agent_id, message_id)
       );
       CREATE INDEX agent_message_ids_run_id_idx ON agent_message_ids (run_id);
       COMMENT ON TABLE agent_message_ids IS 'created by toolgate';
       ALTER TABLE agent_runs
         ADD COLUMN reply_message_id VARCHAR(998),
         ADD COLUMN reply_to JSONB,
         ADD COLUMN reply_cc JSONB,
         ADD COLUMN new_thread JSONB;`,
      { transaction },
    );
    for (let after = 0; ; ) {
      const rows = await sequelize.query<{ id: number; thread_id: number; sender: string | null }>(
        `SELECT id, thread_id, message->>'from' AS sender FROM agent_runs WHERE thread_id IS NOT NULL AND id > :after ORDER BY id LIMIT :limit`,
        { replacements: { after, limit: BATCH }, type: QueryTypes.SELECT, transaction },
      );
      if (rows.length === 0) break;
      after = rows[rows.length - 1]!.id;
      const pairs = rows.flatMap((r) => {
        const key = routingKeyOf(r.sender);
        return key === null ? [] : [{ thread: r.thread_id, key }];
      });
      if (pairs.length === 0) continue;
      await sequelize.query(
        `INSERT INTO thread_participants (thread_id, routing_key)
         SELECT * FROM unnest(ARRAY[:threads]::integer[], ARRAY[:keys]::varchar[]) ON CONFLICT DO NOTHING`,
        { replacements: { threads: pairs.map((p) => p.thread), keys: pairs.map((p) => p.key) }, transaction },
      );
    }
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(
    `ALTER TABLE agent_runs DROP COLUMN reply_message_id, DROP COLUMN reply_to, DROP COLUMN reply_cc, DROP COLUMN new_thread;
     DROP TABLE agent_message_ids;
     DROP TABLE thread_participants;
     ALTER TABLE threads DROP CONSTRAINT threads_reference_key, DROP COLUMN reference;`,
  );
}
