// A toolgate in a schema of its own (its connections say so: toolgate.schema, src/db/schema.ts)
// NOTIFYs its policy changes on a channel of its own, toolgate_policy_<schema>, where its instances
// LISTEN: a second toolgate in another schema of the same database is neither told of this one's
// changes nor made to drop its cache by them. Without a schema nothing changes: the channel stays
// toolgate_policy, which instances of every version listen on.
//
// The functions are migration 20261201000007's, with the channel written in. A later migration that
// replaces either must keep the channel the same way.
import type { QueryInterface } from 'sequelize';

const SCHEMA = /^[a-z_][a-z0-9_]{0,46}$/;

function functions(channel: string): string {
  return `
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
    PERFORM pg_notify('${channel}', '*');
    RETURN;
  END IF;
  -- Agents deleted in this transaction are gone from agents, and their versions with them.
  INSERT INTO agent_policy_versions AS v (agent_id, version)
    SELECT a.id, 1 FROM agents a WHERE a.id = ANY (ids) ORDER BY a.id
    ON CONFLICT (agent_id) DO UPDATE SET version = v.version + 1;
  FOR i IN 0 .. (cardinality(ids) - 1) / 500 LOOP
    PERFORM pg_notify('${channel}', array_to_string(ids[i * 500 + 1 : i * 500 + 500], ','));
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION toolgate_policy_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE policy_epoch SET epoch = epoch + 1;
  PERFORM pg_notify('${channel}', '*');
  RETURN NULL;
END $$;
`;
}

/** The schema the migrating connection's toolgate keeps its tables in, or null for none. */
async function ownSchema(queryInterface: QueryInterface): Promise<string | null> {
  const [[row]] = (await queryInterface.sequelize.query(`SELECT coalesce(current_setting('toolgate.schema', true), '') AS schema`)) as [
    { schema: string }[],
    unknown,
  ];
  const schema = row?.schema ?? '';
  if (schema === '') return null;
  if (!SCHEMA.test(schema)) throw new Error(`toolgate.schema is ${JSON.stringify(schema)}, which is not a schema name toolgate gives.`);
  return schema;
}

export async function up(queryInterface: QueryInterface): Promise<void> {
  const schema = await ownSchema(queryInterface);
  if (schema !== null) await queryInterface.sequelize.query(functions(`toolgate_policy_${schema}`));
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  const schema = await ownSchema(queryInterface);
  if (schema !== null) await queryInterface.sequelize.query(functions('toolgate_policy'));
}
