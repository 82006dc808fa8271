// Every change to what an agent's policy reads (agents, agent_access_rules, agent_toolkits,
// agent_toolkit_rules, toolkits) raises the affected agents' versions and NOTIFYs their ids on the
// channel toolgate_policy, in the transaction that makes the change. So an edit through the API, the
// migration CLI, another instance or plain SQL invalidates every instance's cache once it commits
// (NOTIFY is delivered at commit, and not at all on rollback).
//
// - Statement-level triggers with transition tables: one NOTIFY per statement, not per row.
// - An UPDATE counts the old and the new owner, so a row moved between agents or attachments
//   invalidates both; a cascade delete fires the dependent table's own trigger.
// - A toolkit change reaches every agent holding it; only its name and members are read by a policy.
// - Payloads stay under PostgreSQL's 8000-byte limit: ids go 500 to a NOTIFY, and a change reaching
//   more than 2000 agents sends '*' (drop everything) instead.
// - TRUNCATE has no rows to tell: it sends '*' and raises every version.
import type { QueryInterface } from 'sequelize';

/** As this migration made them; a later migration that replaces them restores these on its way down. */
export const POLICY_CHANGED_FUNCTION = `
CREATE OR REPLACE FUNCTION toolgate_policy_changed(agent_ids integer[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  ids integer[];
BEGIN
  SELECT coalesce(array_agg(DISTINCT id ORDER BY id), '{}') INTO ids FROM unnest(agent_ids) AS id WHERE id IS NOT NULL;
  IF cardinality(ids) = 0 THEN
    RETURN;
  END IF;
  -- Agents deleted in this transaction are gone from agents, and their versions with them.
  INSERT INTO agent_policy_versions AS v (agent_id, version)
    SELECT a.id, 1 FROM agents a WHERE a.id = ANY (ids) ORDER BY a.id
    ON CONFLICT (agent_id) DO UPDATE SET version = v.version + 1;
  IF cardinality(ids) > 2000 THEN
    PERFORM pg_notify('toolgate_policy', '*');
  ELSE
    FOR i IN 0 .. (cardinality(ids) - 1) / 500 LOOP
      PERFORM pg_notify('toolgate_policy', array_to_string(ids[i * 500 + 1 : i * 500 + 500], ','));
    END LOOP;
  END IF;
END $$;
`;

export const POLICY_TRUNCATED_FUNCTION = `
CREATE OR REPLACE FUNCTION toolgate_policy_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE agent_policy_versions SET version = version + 1;
  PERFORM pg_notify('toolgate_policy', '*');
  RETURN NULL;
END $$;
`;

const UP = `${POLICY_CHANGED_FUNCTION}
${POLICY_TRUNCATED_FUNCTION}
CREATE FUNCTION toolgate_agents_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM toolgate_policy_changed(ARRAY(SELECT id FROM new_rows));
  ELSIF TG_OP = 'UPDATE' THEN
    PERFORM toolgate_policy_changed(ARRAY(SELECT id FROM new_rows UNION SELECT id FROM old_rows));
  ELSE
    PERFORM toolgate_policy_changed(ARRAY(SELECT id FROM old_rows));
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION toolgate_agent_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM toolgate_policy_changed(ARRAY(SELECT agent_id FROM new_rows));
  ELSIF TG_OP = 'UPDATE' THEN
    PERFORM toolgate_policy_changed(ARRAY(SELECT agent_id FROM new_rows UNION SELECT agent_id FROM old_rows));
  ELSE
    PERFORM toolgate_policy_changed(ARRAY(SELECT agent_id FROM old_rows));
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION toolgate_gate_rules_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM toolgate_policy_changed(ARRAY(SELECT at.agent_id FROM agent_toolkits at WHERE at.id IN (SELECT agent_toolkit_id FROM new_rows)));
  ELSIF TG_OP = 'UPDATE' THEN
    PERFORM toolgate_policy_changed(ARRAY(SELECT at.agent_id FROM agent_toolkits at
      WHERE at.id IN (SELECT agent_toolkit_id FROM new_rows UNION SELECT agent_toolkit_id FROM old_rows)));
  ELSE
    -- After a cascade from agent_toolkits the attachment is gone, and its own trigger has told.
    PERFORM toolgate_policy_changed(ARRAY(SELECT at.agent_id FROM agent_toolkits at WHERE at.id IN (SELECT agent_toolkit_id FROM old_rows)));
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION toolgate_toolkits_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    PERFORM toolgate_policy_changed(ARRAY(SELECT at.agent_id FROM agent_toolkits at WHERE at.toolkit_id IN (
      SELECT n.id FROM new_rows n LEFT JOIN old_rows o ON o.id = n.id
       WHERE o.id IS NULL OR (n.name, n.member_tool_ids) IS DISTINCT FROM (o.name, o.member_tool_ids)
      UNION SELECT o.id FROM old_rows o LEFT JOIN new_rows n ON n.id = o.id WHERE n.id IS NULL)));
  ELSE
    -- Attachments usually cascade away first (and tell); an adopted table's may not.
    PERFORM toolgate_policy_changed(ARRAY(SELECT at.agent_id FROM agent_toolkits at WHERE at.toolkit_id IN (SELECT id FROM old_rows)));
  END IF;
  RETURN NULL;
END $$;
`;

/** Each table, the function its row triggers call, and whether INSERT matters to a cached policy. */
const TABLES: readonly [table: string, fn: string, events: readonly ('INSERT' | 'UPDATE' | 'DELETE')[]][] = [
  ['agents', 'toolgate_agents_changed', ['INSERT', 'UPDATE', 'DELETE']],
  ['agent_access_rules', 'toolgate_agent_rows_changed', ['INSERT', 'UPDATE', 'DELETE']],
  ['agent_toolkits', 'toolgate_agent_rows_changed', ['INSERT', 'UPDATE', 'DELETE']],
  ['agent_toolkit_rules', 'toolgate_gate_rules_changed', ['INSERT', 'UPDATE', 'DELETE']],
  // A new toolkit is held by no one yet.
  ['toolkits', 'toolgate_toolkits_changed', ['UPDATE', 'DELETE']],
];

const TRANSITIONS = { INSERT: 'NEW TABLE AS new_rows', UPDATE: 'OLD TABLE AS old_rows NEW TABLE AS new_rows', DELETE: 'OLD TABLE AS old_rows' };

function triggersUp(): string {
  return TABLES.flatMap(([table, fn, events]) => [
    ...events.map(
      (event) =>
        `CREATE TRIGGER toolgate_policy_${event.toLowerCase()} AFTER ${event} ON ${table}
           REFERENCING ${TRANSITIONS[event]} FOR EACH STATEMENT EXECUTE FUNCTION ${fn}();`,
    ),
    `CREATE TRIGGER toolgate_policy_truncate AFTER TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION toolgate_policy_truncated();`,
  ]).join('\n');
}

function triggersDown(): string {
  return TABLES.flatMap(([table, , events]) =>
    [...events.map((e) => e.toLowerCase()), 'truncate'].map((event) => `DROP TRIGGER toolgate_policy_${event} ON ${table};`),
  ).join('\n');
}

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.sequelize.query(UP, { transaction });
    await queryInterface.sequelize.query(triggersUp(), { transaction });
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.sequelize.query(triggersDown(), { transaction });
    await queryInterface.sequelize.query(
      `DROP FUNCTION toolgate_toolkits_changed();
       DROP FUNCTION toolgate_gate_rules_changed();
       DROP FUNCTION toolgate_agent_rows_changed();
       DROP FUNCTION toolgate_agents_changed();
       DROP FUNCTION toolgate_policy_truncated();
       DROP FUNCTION toolgate_policy_changed(integer[]);`,
      { transaction },
    );
  });
}
