// Approvals bound to arguments (SEMANTICS §12).
// - agent_toolkits.approvers: the approver patterns of an attachment whose members' calls need
//   approval; NULL when they need none, empty when only an operator approves.
// - approval_requests: one call that did not run, with the exact input it was validated with, who
//   asked (run, routing key, thread, message), and how it was decided. At most one request is
//   pending for the same call in the same place (a thread, or else the requester), so asking again
//   returns it. `attachment_id` has no foreign key: a request outlives its attachment, as `void`.
// - tool_calls: a call filed as a request is recorded `pending_approval`; an approved one's record
//   names its request and its approver (the requester is its routing key).
// - Triggers void the pending requests of an attachment that is detached or whose approvers change,
//   in the same transaction, whoever makes the change (the API, the dashboard, plain SQL).
import type { QueryInterface } from 'sequelize';
import { addMarkedColumns, dropMarkedColumns } from './lib/adopt-table';

const CHECKS = ['tool_calls_status_check', 'tool_calls_toolgate_status_check'];
// tool_calls may be a legacy table adopted in place: its new columns are added and marked as the adoption's are.
const TOOL_CALL_COLUMNS = { approval_request_id: 'INTEGER', approved_by: 'VARCHAR(320)' };
const BEFORE = "'started', 'success', 'failure', 'denied', 'skipped'";
const AFTER = "'started', 'success', 'failure', 'denied', 'skipped', 'pending_approval'";

const UP = `
ALTER TABLE agent_toolkits ADD COLUMN approvers VARCHAR(320)[];

CREATE TABLE approval_requests (
  id SERIAL PRIMARY KEY,
  agent_id INTEGER NOT NULL CONSTRAINT approval_requests_agent_id_fkey REFERENCES agents (id) ON DELETE CASCADE,
  attachment_id INTEGER NOT NULL,
  tool_id VARCHAR(64) NOT NULL,
  input JSONB NOT NULL,
  input_digest CHAR(32) NOT NULL,
  scope VARCHAR(340) NOT NULL,
  status VARCHAR(16) NOT NULL DEFAULT 'pending'
    CONSTRAINT approval_requests_status_check CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'void')),
  run VARCHAR(16) NOT NULL CONSTRAINT approval_requests_run_check CHECK (run IN ('sender', 'scheduled')),
  routing_key VARCHAR(320),
  thread_id INTEGER CONSTRAINT approval_requests_thread_id_fkey REFERENCES threads (id) ON DELETE SET NULL,
  run_id INTEGER CONSTRAINT approval_requests_run_id_fkey REFERENCES agent_runs (id) ON DELETE SET NULL,
  message_id VARCHAR(998),
  decided_by VARCHAR(320),
  decided_via VARCHAR(16) CONSTRAINT approval_requests_decided_via_check CHECK (decided_via IN ('message', 'admin', 'dashboard')),
  decided_at TIMESTAMPTZ,
  void_reason TEXT,
  result JSONB,
  tool_call_id BIGINT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  expires_at TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX approval_requests_pending_key ON approval_requests (agent_id, scope, attachment_id, tool_id, input_digest) WHERE status = 'pending';
CREATE INDEX approval_requests_agent_id_idx ON approval_requests (agent_id, id);
CREATE INDEX approval_requests_thread_pending_idx ON approval_requests (thread_id) WHERE status = 'pending';
CREATE INDEX approval_requests_attachment_pending_idx ON approval_requests (attachment_id) WHERE status = 'pending';
COMMENT ON TABLE approval_requests IS 'created by toolgate';


CREATE FUNCTION toolgate_void_approvals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE approval_requests SET status = 'void', void_reason = 'the attachment was detached', decided_at = now()
     WHERE status = 'pending' AND attachment_id IN (SELECT id FROM old_rows);
  ELSE
    UPDATE approval_requests r SET status = 'void', void_reason = 'the approvers changed', decided_at = now()
      FROM old_rows o JOIN new_rows n ON n.id = o.id
     WHERE r.status = 'pending' AND r.attachment_id = n.id AND o.approvers IS DISTINCT FROM n.approvers;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER toolgate_approvals_void_delete AFTER DELETE ON agent_toolkits
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_void_approvals();
CREATE TRIGGER toolgate_approvals_void_update AFTER UPDATE ON agent_toolkits
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION toolgate_void_approvals();
`;

const DOWN = `
DROP TRIGGER toolgate_approvals_void_update ON agent_toolkits;
DROP TRIGGER toolgate_approvals_void_delete ON agent_toolkits;
DROP FUNCTION toolgate_void_approvals();
DROP TABLE approval_requests;
ALTER TABLE agent_toolkits DROP COLUMN approvers;
`;

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(UP, { transaction });
    await addMarkedColumns(sequelize, 'tool_calls', TOOL_CALL_COLUMNS, transaction);
    await replaceStatusChecks(queryInterface, AFTER, transaction);
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    // The older schema cannot hold a pending_approval record: it never ran, so it reads as denied.
    await sequelize.query(
      `UPDATE tool_calls SET status = 'denied', error = 'awaiting approval when this record was written: the call never ran' WHERE status = 'pending_approval'`,
      { transaction },
    );
    await replaceStatusChecks(queryInterface, BEFORE, transaction);
    await dropMarkedColumns(sequelize, 'tool_calls', Object.keys(TOOL_CALL_COLUMNS), transaction);
    await sequelize.query(DOWN, { transaction });
  });
}

async function replaceStatusChecks(queryInterface: QueryInterface, statuses: string, transaction: import('sequelize').Transaction): Promise<void> {
  const sequelize = queryInterface.sequelize;
  const [rows] = await sequelize.query(`SELECT conname FROM pg_constraint WHERE conrelid = 'tool_calls'::regclass AND conname IN (:names)`, {
    replacements: { names: CHECKS },
    transaction,
  });
  for (const { conname } of rows as { conname: string }[]) {
    // NULL passes a CHECK: rows of an adopted legacy table may have no status.
    await sequelize.query(`ALTER TABLE tool_calls DROP CONSTRAINT ${conname}, ADD CONSTRAINT ${conname} CHECK (status IN (${statuses}))`, { transaction });
  }
}
