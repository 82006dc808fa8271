// The record tables partitioned by time (docs/MIGRATING.md, "Partitions"; docs/DECISIONS.md): so
// that a retention (TOOLGATE_RETENTION) drops a month of records as one partition, whatever it
// holds, rather than deleting it row by row.
// - tool_calls and agent_runs by created_at, cap_hits by at, one partition a month, each moved with
//   its data as migrations/lib/partition-table.ts says, with no long lock: the old table becomes the
//   partition for everything before the bound. Their keys become (id, created_at): a partitioned
//   table's unique keys hold its time column. Their ids still come from their sequences.
// - agent_run_keys: the runs' ids, one row a run, kept by a trigger on agent_runs. What pointed at a
//   run (agent_message_ids.run_id, approval_requests.run_id) points here, with the same ON DELETE:
//   a foreign key needs a key of the id alone, which a partitioned table cannot have. A run's id is
//   so still unique, enforced by this table's key.
// - toolgate_make_partitions(table, since, until, unit): makes the month's (or day's) partitions the
//   table lacks from `since` until `until`, named <table>_pYYYY_MM (or _pYYYY_MM_DD); the sweeper calls it, so
//   the months ahead are always there. It finds partitions by the table's own (pg_inherits), never
//   by name, so no other table of the database is read or touched.
// - agent_message_ids (a message's Message-ID, the dedup of SEMANTICS §13) and idempotency_keys stay
//   plain tables: their keys hold no time (DECISIONS).
// An adopted legacy tool_calls is the host's table: it is left as it is, and kept whole.
import type { QueryInterface } from 'sequelize';
import { keyOf, moveBack, prepareMove, swapIn, toBeMoved, type PartitionSpec } from './lib/partition-table';

const TABLES: readonly PartitionSpec[] = [
  { table: 'tool_calls', column: 'created_at' },
  { table: 'agent_runs', column: 'created_at' },
  { table: 'cap_hits', column: 'at' },
];

const MAKE_PARTITIONS = `
CREATE FUNCTION toolgate_make_partitions(parent regclass, since timestamptz, until timestamptz, unit text) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz := date_trunc(unit, since, 'UTC');
  step interval := ('1 ' || unit)::interval;
  covered timestamptz;
  stop timestamptz;
  made integer := 0;
  schema_name text;
  base text;
  name text;
BEGIN
  IF unit NOT IN ('month', 'day') THEN
    RAISE EXCEPTION 'partitions are a month or a day, not %', unit;
  END IF;
  SELECT n.nspname, c.relname INTO schema_name, base FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = parent;
  -- From the first moment no partition holds to the next period's start (or the next partition's), so
  -- partitions of either unit, and the old table's, leave no gap and never overlap.
  WHILE t < until LOOP
    SELECT p.hi INTO covered FROM toolgate_partitions(parent) p WHERE (p.lo IS NULL OR p.lo <= t) AND p.hi > t;
    IF FOUND THEN
      t := covered;
      CONTINUE;
    END IF;
    stop := LEAST(date_trunc(unit, t, 'UTC') + step, COALESCE((SELECT min(p.lo) FROM toolgate_partitions(parent) p WHERE p.lo > t), 'infinity'));
    name := base || '_p' || to_char(t AT TIME ZONE 'UTC', CASE unit WHEN 'month' THEN 'YYYY_MM' ELSE 'YYYY_MM_DD' END);
    EXECUTE format('CREATE TABLE %I.%I PARTITION OF %s FOR VALUES FROM (%L) TO (%L)', schema_name, name, parent, t, stop);
    EXECUTE format('COMMENT ON TABLE %I.%I IS %L', schema_name, name, 'created by toolgate');
    made := made + 1;
    t := stop;
  END LOOP;
  RETURN made;
END $$;`;

// A partition's range, read from its bound (NULL for MINVALUE); partitions found by pg_inherits only.
const PARTITIONS = `
CREATE FUNCTION toolgate_partitions(parent regclass) RETURNS TABLE (partition regclass, lo timestamptz, hi timestamptz) LANGUAGE sql STABLE AS $$
  SELECT c.oid::regclass,
         substring(pg_get_expr(c.relpartbound, c.oid) from $re$FROM \\('([^']+)'\\)$re$)::timestamptz,
         substring(pg_get_expr(c.relpartbound, c.oid) from $re$TO \\('([^']+)'\\)$re$)::timestamptz
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
   WHERE i.inhparent = parent
$$;`;

const RUN_KEYS = `
CREATE TABLE agent_run_keys (
  id INTEGER PRIMARY KEY,
  created_at TIMESTAMPTZ NOT NULL
);
COMMENT ON TABLE agent_run_keys IS 'created by toolgate';
CREATE FUNCTION toolgate_keep_run_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO agent_run_keys (id, created_at) VALUES (NEW.id, NEW.created_at);
  ELSIF TG_OP = 'DELETE' THEN
    DELETE FROM agent_run_keys WHERE id = OLD.id;
  ELSE
    UPDATE agent_run_keys SET id = NEW.id, created_at = NEW.created_at WHERE id = OLD.id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER toolgate_run_keys AFTER INSERT OR DELETE OR UPDATE OF id, created_at ON agent_runs
  FOR EACH ROW EXECUTE FUNCTION toolgate_keep_run_key();
CREATE INDEX approval_requests_run_id_idx ON approval_requests (run_id);`;

// Each foreign key to a run, as it was and as it becomes.
const RUN_REFERENCES = [
  { table: 'agent_message_ids', old: 'agent_message_ids_run_id_fkey', new: 'agent_message_ids_run_key_fkey', onDelete: 'CASCADE' },
  { table: 'approval_requests', old: 'approval_requests_run_id_fkey', new: 'approval_requests_run_key_fkey', onDelete: 'SET NULL' },
];

export async function up(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.query(`${PARTITIONS}\n${MAKE_PARTITIONS}`);
  const moving: PartitionSpec[] = [];
  for (const spec of TABLES) if (await toBeMoved(sequelize, spec.table)) moving.push(spec);
  const keys = new Map<string, string[]>();
  for (const spec of moving) keys.set(spec.table, await keyOf(sequelize, spec.table));

  const runs = moving.some((s) => s.table === 'agent_runs');
  if (runs) {
    // The keys first, then the trigger that keeps them, then every run's: none is missed meanwhile.
    await sequelize.transaction((transaction) => sequelize.query(RUN_KEYS, { transaction }));
    await sequelize.query(`INSERT INTO agent_run_keys (id, created_at) SELECT id, created_at FROM agent_runs ON CONFLICT (id) DO NOTHING`);
    for (const ref of RUN_REFERENCES) {
      await sequelize.query(
        `ALTER TABLE ${ref.table} ADD CONSTRAINT ${ref.new} FOREIGN KEY (run_id) REFERENCES agent_run_keys (id) ON DELETE ${ref.onDelete} NOT VALID`,
      );
      await sequelize.query(`ALTER TABLE ${ref.table} VALIDATE CONSTRAINT ${ref.new}`);
      await sequelize.query(`ALTER TABLE ${ref.table} DROP CONSTRAINT ${ref.old}`);
    }
  }

  for (const spec of moving) {
    const key = keys.get(spec.table)!;
    const bound = await prepareMove(sequelize, spec, key);
    // Its triggers (the runs' keys, the decision log's) move to the partitioned table with it.
    await swapIn(sequelize, spec, key, bound);
  }
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const sequelize = queryInterface.sequelize;
  for (const spec of [...TABLES].reverse()) {
    // The triggers are set aside while the rows move back, and come back on the plain table.
    await moveBack(sequelize, spec);
  }
  await sequelize.transaction(async (transaction) => {
    const [[{ keys }]] = (await sequelize.query(`SELECT to_regclass('agent_run_keys') IS NOT NULL AS keys`, { transaction })) as [
      { keys: boolean }[],
      unknown,
    ];
    if (keys) {
      for (const ref of RUN_REFERENCES) {
        await sequelize.query(
          `ALTER TABLE ${ref.table} ADD CONSTRAINT ${ref.old} FOREIGN KEY (run_id) REFERENCES agent_runs (id) ON DELETE ${ref.onDelete};
           ALTER TABLE ${ref.table} DROP CONSTRAINT ${ref.new};`,
          { transaction },
        );
      }
      await sequelize.query(
        `DROP TRIGGER IF EXISTS toolgate_run_keys ON agent_runs; DROP INDEX approval_requests_run_id_idx; DROP TABLE agent_run_keys; DROP FUNCTION toolgate_keep_run_key();`,
        {
        transaction,
      });
    }
    await sequelize.query(`DROP FUNCTION toolgate_make_partitions(regclass, timestamptz, timestamptz, text); DROP FUNCTION toolgate_partitions(regclass);`, {
      transaction,
    });
  });
}
