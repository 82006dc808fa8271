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
// The threads of an older database get their senders as participants, so a conversation under way
// carries on. A migration stays as written, so it does not import the service's routing-key code:
// the senders' keys are read here in SQL, for plain ASCII addresses (`Name <a+tag@b.com>` or
// `a@b.com`: lowercased, the tag cut). A sender SQL cannot reduce so (a Unicode domain, a quoted local
// part) is left out, fail-closed: their next message starts a thread of its own.
import type { QueryInterface } from 'sequelize';

const BACKFILL = `
  INSERT INTO thread_participants (thread_id, routing_key)
  SELECT DISTINCT r.thread_id, k.key
    FROM agent_runs r
    CROSS JOIN LATERAL (SELECT lower(coalesce(
      substring(r.message->>'from' from '<([^<>@[:space:]]+@[^<>@[:space:]]+)>[[:space:]]*$'),
      substring(r.message->>'from' from '^[[:space:]]*([^<>@[:space:]"]+@[^<>@[:space:]]+)[[:space:]]*$'))) AS address) a
    CROSS JOIN LATERAL (SELECT regexp_replace(a.address, '^([^+@]+)[+][^@]*@', '\\1@') AS key) k
   WHERE r.thread_id IS NOT NULL AND k.key ~ '^[a-z0-9._%-]+@([a-z0-9-]+[.])+[a-z0-9-]+$'
  ON CONFLICT DO NOTHING`;

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
    await sequelize.query(BACKFILL, { transaction });
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
