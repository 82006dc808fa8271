// Exactly once (SEMANTICS §13): what lets a redelivered message, a retried request and a crash run
// nothing twice.
// - toolgate_instances: each instance's heartbeat. An instance whose heartbeat stopped is dead: the
//   sweeper closes what it left open, and a retry of what it held is answered, not run again.
// - idempotency_keys: a caller's Idempotency-Key per route, the hash of the body it came with, and
//   the answer once there is one (kept at least 24 hours). Answers are `json`, not `jsonb`: a
//   replay is the first answer to the byte, its keys in their order.
// - agent_message_ids.content_digest: a redelivered message is the same sender with the same content.
// - agent_runs.answer: what a message's run answered, for a redelivery; agent_runs.instance_id and
//   tool_calls.instance_id, tool_calls.deadline_at: who ran it, and when a `started` record whose
//   instance died may be called interrupted (the tool's timeout plus a grace period).
import type { QueryInterface } from 'sequelize';
import { addMarkedColumns, dropMarkedColumns } from './lib/adopt-table';

const TOOL_CALL_COLUMNS = { instance_id: 'VARCHAR(64)', deadline_at: 'TIMESTAMPTZ' };

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `CREATE TABLE toolgate_instances (
         id VARCHAR(64) PRIMARY KEY,
         started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
         heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now(),
         stopped_at TIMESTAMPTZ
       );
       COMMENT ON TABLE toolgate_instances IS 'created by toolgate';
       CREATE TABLE idempotency_keys (
         scope VARCHAR(300) NOT NULL,
         key VARCHAR(255) NOT NULL,
         request_hash CHAR(64) NOT NULL,
         state VARCHAR(8) NOT NULL CONSTRAINT idempotency_keys_state_check CHECK (state IN ('running', 'done')),
         instance_id VARCHAR(64) NOT NULL,
         status INTEGER,
         body JSON,
         created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
         expires_at TIMESTAMPTZ NOT NULL,
         CONSTRAINT idempotency_keys_pkey PRIMARY KEY (scope, key)
       );
       CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);
       COMMENT ON TABLE idempotency_keys IS 'created by toolgate';
       ALTER TABLE agent_message_ids ADD COLUMN content_digest CHAR(64);
       ALTER TABLE agent_runs ADD COLUMN answer JSON, ADD COLUMN instance_id VARCHAR(64);
       CREATE INDEX agent_runs_open_idx ON agent_runs (created_at) WHERE completed_at IS NULL;`,
      { transaction },
    );
    await addMarkedColumns(sequelize, 'tool_calls', TOOL_CALL_COLUMNS, transaction);
    await sequelize.query(`CREATE INDEX tool_calls_toolgate_started_idx ON tool_calls (deadline_at) WHERE status = 'started'`, { transaction });
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query('DROP INDEX tool_calls_toolgate_started_idx', { transaction });
    await dropMarkedColumns(sequelize, 'tool_calls', Object.keys(TOOL_CALL_COLUMNS), transaction);
    await sequelize.query(
      `DROP INDEX agent_runs_open_idx;
       ALTER TABLE agent_runs DROP COLUMN answer, DROP COLUMN instance_id;
       ALTER TABLE agent_message_ids DROP COLUMN content_digest;
       DROP TABLE idempotency_keys;
       DROP TABLE toolgate_instances;`,
      { transaction },
    );
  });
}
