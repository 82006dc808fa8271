// What the decision log (migration 20261205000301) costs each tool-call record, made smaller: an
// execution's two records are what every dispatched tool waits on (docs/PERFORMANCE.md, bench:mcp).
// - One trigger, for INSERT and for UPDATE OF status, with no WHEN: its function asks the same
//   question (a record written complete; a `started` record leaving `started`). A trigger's WHEN is
//   made ready again by every statement that fires it, which cost more than the call it spares.
// - One index: the log's key becomes (xact_id, position), the order it is read in, in place of the
//   position alone beside an index on both. Positions still only grow and are still unique (their
//   identity gives each once), so the log can still be partitioned by ranges of them.
// The key's index is built in the migration's transaction, which holds writes to tool_calls while it
// builds (their entries wait): an operator with a very large log builds it CONCURRENTLY beforehand
// under this name (docs/MIGRATING.md); the migration then keeps it, and replaces one a failed build
// left invalid.
import type { QueryInterface } from 'sequelize';
import { keepOrBuildIndex } from './lib/prebuilt-index';

const KEY_INDEX = 'decision_log_toolgate_key';

/** An entry's event, from the status its record was given (as migration 20261205000301 has it). */
const eventOf = (status: string) =>
  `CASE ${status} WHEN 'success' THEN 'completed' WHEN 'failure' THEN 'completed' WHEN 'interrupted' THEN 'interrupted' ELSE 'decided' END`;

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `${keepOrBuildIndex(KEY_INDEX, `CREATE UNIQUE INDEX IF NOT EXISTS ${KEY_INDEX} ON decision_log (xact_id, position)`)}
       ALTER TABLE decision_log DROP CONSTRAINT decision_log_pkey;
       ALTER TABLE decision_log ADD CONSTRAINT decision_log_pkey PRIMARY KEY USING INDEX ${KEY_INDEX};
       DROP INDEX decision_log_xact_id_position_idx;
       CREATE OR REPLACE FUNCTION toolgate_decision_logged() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.status IS DISTINCT FROM 'started' AND (TG_OP = 'INSERT' OR OLD.status = 'started') THEN
           INSERT INTO decision_log (tool_call_id, event) VALUES (NEW.id, ${eventOf('NEW.status')});
         END IF;
         RETURN NULL;
       END $$;
       DROP TRIGGER toolgate_decision_logged_update ON tool_calls;
       DROP TRIGGER toolgate_decision_logged_insert ON tool_calls;
       CREATE TRIGGER toolgate_decision_logged AFTER INSERT OR UPDATE OF status ON tool_calls
         FOR EACH ROW EXECUTE FUNCTION toolgate_decision_logged();`,
      { transaction },
    );
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `DROP TRIGGER toolgate_decision_logged ON tool_calls;
       CREATE OR REPLACE FUNCTION toolgate_decision_logged() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO decision_log (tool_call_id, event)
           VALUES (NEW.id, ${eventOf('NEW.status')});
         RETURN NULL;
       END $$;
       CREATE TRIGGER toolgate_decision_logged_insert AFTER INSERT ON tool_calls
         FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM 'started') EXECUTE FUNCTION toolgate_decision_logged();
       CREATE TRIGGER toolgate_decision_logged_update AFTER UPDATE OF status ON tool_calls
         FOR EACH ROW WHEN (OLD.status = 'started' AND NEW.status IS DISTINCT FROM 'started') EXECUTE FUNCTION toolgate_decision_logged();
       CREATE INDEX decision_log_xact_id_position_idx ON decision_log (xact_id, position);
       ALTER TABLE decision_log DROP CONSTRAINT decision_log_pkey;
       ALTER TABLE decision_log ADD CONSTRAINT decision_log_pkey PRIMARY KEY (position);`,
      { transaction },
    );
  });
}
