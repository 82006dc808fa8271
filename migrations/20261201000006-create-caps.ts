// Caps (SEMANTICS §13): at most N calls of an attachment's members per window, per agent or per
// sender, counted atomically across instances.
// - agent_toolkits.caps: the attachment's caps, `[{tool_id | null, per, limit, window_s}]`.
// - cap_usage: for each counter (an attachment's cap, for one tool or all its members, for one
//   agent or one sender), the times of the calls it counted within its window.
// - toolgate_claim_caps(candidates): counts one call against the first candidate attachment whose
//   every cap has room, in one statement: each counter row is locked as it is updated and its room
//   checked on the row as it stands, so concurrent calls on any number of instances never pass a
//   cap; a candidate that lacks room is undone whole before the next is tried. It returns that
//   attachment's id, or NULL when none has room.
import type { QueryInterface } from 'sequelize';

const UP = `
ALTER TABLE agent_toolkits ADD COLUMN caps JSONB NOT NULL DEFAULT '[]';

CREATE TABLE cap_usage (
  cap_key VARCHAR(500) PRIMARY KEY,
  hits TIMESTAMPTZ[] NOT NULL
);
COMMENT ON TABLE cap_usage IS 'created by toolgate';

CREATE FUNCTION toolgate_claim_caps(candidates jsonb) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  candidate jsonb;
  cap jsonb;
  counted integer;
BEGIN
  FOR candidate IN SELECT * FROM jsonb_array_elements(candidates) LOOP
    BEGIN
      FOR cap IN SELECT * FROM jsonb_array_elements(candidate->'caps') LOOP
        counted := NULL;
        INSERT INTO cap_usage AS u (cap_key, hits) VALUES (cap->>'key', ARRAY[clock_timestamp()])
        ON CONFLICT (cap_key) DO UPDATE
          SET hits = array_append(ARRAY(SELECT h FROM unnest(u.hits) AS h WHERE h > clock_timestamp() - (cap->>'window_s')::integer * interval '1 second'), clock_timestamp())
          WHERE cardinality(ARRAY(SELECT h FROM unnest(u.hits) AS h WHERE h > clock_timestamp() - (cap->>'window_s')::integer * interval '1 second')) < (cap->>'limit')::integer
        RETURNING 1 INTO counted;
        IF counted IS NULL THEN
          RAISE EXCEPTION 'cap full' USING ERRCODE = 'TG001';
        END IF;
      END LOOP;
      RETURN (candidate->>'attachment_id')::integer;
    EXCEPTION WHEN SQLSTATE 'TG001' THEN
      -- This candidate's counts are undone with its block; the next one is tried.
      NULL;
    END;
  END LOOP;
  RETURN NULL;
END $$;
`;

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction((transaction) => queryInterface.sequelize.query(UP, { transaction }));
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(
    `DROP FUNCTION toolgate_claim_caps(jsonb);
     DROP TABLE cap_usage;
     ALTER TABLE agent_toolkits DROP COLUMN caps;`,
  );
}
