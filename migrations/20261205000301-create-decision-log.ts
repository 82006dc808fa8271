// The decision log (SEMANTICS §16, "Export"): one entry per tool-call record once it has its
// decision or its outcome, read as NDJSON from a cursor (GET /decisions).
// - An entry is written by a trigger on tool_calls, in the transaction of the write it logs, so no
//   writer (the dispatch path, an approval, the sweeper, a host's own SQL) can leave it out: a
//   record written complete (denied, skipped, pending_approval, ...) is logged as it is inserted; an
//   execution's `started` record is logged once, when it leaves `started` (success, failure,
//   interrupted). A running call is not in the log yet.
// - xact_id is the writing transaction's id. A reader takes only entries whose transaction is older
//   than the oldest one still running (its snapshot's xmin), in (xact_id, position) order: every
//   transaction that commits later has an id at or past that xmin, so it lands after any cursor
//   already given, never behind one. Ids from a sequence alone commit out of order.
// - position is a bigint that only grows, and the primary key: the table can be partitioned by
//   ranges of it later, as the record tables are by time.
// - Records written before this migration are logged by it, in id order (one transaction).
import type { QueryInterface } from 'sequelize';

/** An entry's event, from the status its record was given. */
const eventOf = (status: string) =>
  `CASE ${status} WHEN 'success' THEN 'completed' WHEN 'failure' THEN 'completed' WHEN 'interrupted' THEN 'interrupted' ELSE 'decided' END`;

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `CREATE TABLE decision_log (
         position BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
         xact_id XID8 NOT NULL DEFAULT pg_current_xact_id(),
         tool_call_id BIGINT NOT NULL,
         event VARCHAR(16) NOT NULL CHECK (event IN ('decided', 'completed', 'interrupted')),
         logged_at TIMESTAMPTZ NOT NULL DEFAULT now()
       );
       CREATE INDEX decision_log_xact_id_position_idx ON decision_log (xact_id, position);
       COMMENT ON TABLE decision_log IS 'created by toolgate';
       INSERT INTO decision_log (tool_call_id, event)
         SELECT id, ${eventOf('status')} FROM tool_calls WHERE status IS DISTINCT FROM 'started' ORDER BY id;
       CREATE FUNCTION toolgate_decision_logged() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO decision_log (tool_call_id, event)
           VALUES (NEW.id, ${eventOf('NEW.status')});
         RETURN NULL;
       END $$;
       CREATE TRIGGER toolgate_decision_logged_insert AFTER INSERT ON tool_calls
         FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM 'started') EXECUTE FUNCTION toolgate_decision_logged();
       CREATE TRIGGER toolgate_decision_logged_update AFTER UPDATE OF status ON tool_calls
         FOR EACH ROW WHEN (OLD.status = 'started' AND NEW.status IS DISTINCT FROM 'started') EXECUTE FUNCTION toolgate_decision_logged();`,
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `DROP TRIGGER toolgate_decision_logged_update ON tool_calls;
       DROP TRIGGER toolgate_decision_logged_insert ON tool_calls;
       DROP FUNCTION toolgate_decision_logged();
       DROP TABLE decision_log;`,
      { transaction },
    );
  });
}
