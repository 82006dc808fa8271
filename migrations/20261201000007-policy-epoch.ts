// One policy epoch for changes too large to count agent by agent. A statement reaching more than
// 2000 agents (the enabled_tools migration's 800,000 attachments, its undo, a TRUNCATE) raised one
// version row per agent: most of a million-agent migration's time went to that upsert. It now raises
// one row, the epoch, and NOTIFYs '*' as before; smaller changes raise their agents' versions as
// before.
//
// An agent's effective version is its own version (0 without a row) plus the epoch. Both only grow,
// so any change to either raises the sum: strict mode's cached policies stay correct with one read.
// toolgate_policy_version(agent) returns it, or NULL when there is no such agent (existence is read
// from agents now, since an agent added in bulk has no version row).
import type { QueryInterface } from 'sequelize';
import { POLICY_CHANGED_FUNCTION, POLICY_TRUNCATED_FUNCTION } from './20261130000021-notify-policy-changes';

const UP = `
CREATE TABLE policy_epoch (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  epoch bigint NOT NULL DEFAULT 0
);
COMMENT ON TABLE policy_epoch IS 'created by toolgate';
INSERT INTO policy_epoch DEFAULT VALUES;

CREATE FUNCTION toolgate_policy_version(agent integer) RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT coalesce(v.version, 0) + (SELECT e.epoch FROM policy_epoch e)
    FROM agents a LEFT JOIN agent_policy_versions v ON v.agent_id = a.id
   WHERE a.id = agent
$$;

CREATE OR REPLACE FUNCTION toolgate_policy_changed(agent_ids integer[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  ids integer[];
BEGIN
  SELECT coalesce(array_agg(DISTINCT id ORDER BY id), '{}') INTO ids FROM unnest(agent_ids) AS id WHERE id IS NOT NULL;
  IF cardinality(ids) = 0 THEN
    RETURN;
  END IF;
  IF cardinality(ids) > 2000 THEN
    UPDATE policy_epoch SET epoch = epoch + 1;
    PERFORM pg_notify('toolgate_policy', '*');
    RETURN;
  END IF;
  -- Agents deleted in this transaction are gone from agents, and their versions with them.
  INSERT INTO agent_policy_versions AS v (agent_id, version)
    SELECT a.id, 1 FROM agents a WHERE a.id = ANY (ids) ORDER BY a.id
    ON CONFLICT (agent_id) DO UPDATE SET version = v.version + 1;
  FOR i IN 0 .. (cardinality(ids) - 1) / 500 LOOP
    PERFORM pg_notify('toolgate_policy', array_to_string(ids[i * 500 + 1 : i * 500 + 500], ','));
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION toolgate_policy_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE policy_epoch SET epoch = epoch + 1;
  PERFORM pg_notify('toolgate_policy', '*');
  RETURN NULL;
END $$;
`;

// On the way down the epoch is folded into every version row, so no cached version is seen again.
const DOWN = `
${POLICY_CHANGED_FUNCTION}
${POLICY_TRUNCATED_FUNCTION}
INSERT INTO agent_policy_versions AS v (agent_id, version)
  SELECT a.id, 1 + (SELECT e.epoch FROM policy_epoch e) FROM agents a
  ON CONFLICT (agent_id) DO UPDATE SET version = v.version + 1 + (SELECT e.epoch FROM policy_epoch e);
DROP FUNCTION toolgate_policy_version(integer);
DROP TABLE policy_epoch;
`;

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.sequelize.query(UP, { transaction });
  });
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.sequelize.query(DOWN, { transaction });
  });
}
