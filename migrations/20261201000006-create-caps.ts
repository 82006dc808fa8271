// Caps (SEMANTICS §13): at most N calls of an attachment's members per window, per agent or per
// sender, counted atomically across instances.
// - agent_toolkits.caps: the attachment's caps, `[{tool_id | null, per, limit, window_s}]`.
// - cap_usage: one counter per cap, for one tool (or all its members), for one agent or one sender:
//   how many calls it holds within its window (`used`), and when it last counted one.
// - cap_hits: the time of each call a counter holds. A claim drops the counter's calls that left
//   the window and adds its own, so each call is written once and deleted once: a claim costs the
//   same whether the counter holds 3 calls or 9,000 (a counter kept as one array of times was
//   rewritten whole on every claim: 22 ms a claim at 7,500 to 9,700 calls).
// - toolgate_claim_caps(candidates): counts one call against the first candidate attachment whose
//   every cap has room, in one statement: each counter row is locked before its room is checked, so
//   concurrent calls on any number of instances never pass a cap; a candidate that lacks room is
//   undone whole before the next is tried. It returns that attachment's id, or NULL when none has
//   room.
// - toolgate_sweep_caps(): drops the counters every call of which has left the window (the sweeper
//   calls it), skipping any a claim holds.
import type { QueryInterface } from 'sequelize';

const UP = `
ALTER TABLE agent_toolkits ADD COLUMN caps JSONB NOT NULL DEFAULT '[]';

CREATE TABLE cap_usage (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  cap_key VARCHAR(500) NOT NULL UNIQUE,
  window_s INTEGER NOT NULL,
  used INTEGER NOT NULL,
  last_at TIMESTAMPTZ NOT NULL
);
COMMENT ON TABLE cap_usage IS 'created by toolgate';

CREATE TABLE cap_hits (
  usage_id BIGINT NOT NULL,
  at TIMESTAMPTZ NOT NULL
);
CREATE INDEX cap_hits_usage_at_idx ON cap_hits (usage_id, at);
COMMENT ON TABLE cap_hits IS 'created by toolgate';

CREATE FUNCTION toolgate_claim_caps(candidates jsonb) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  candidate jsonb;
  cap jsonb;
  counter_id bigint;
  held integer;
  window_start timestamptz;
BEGIN
  FOR candidate IN SELECT * FROM jsonb_array_elements(candidates) LOOP
    BEGIN
      FOR cap IN SELECT * FROM jsonb_array_elements(candidate->'caps') LOOP
        -- The counter, locked; made when missing (a sweep may drop it before the lock: so, again).
        LOOP
          SELECT id, used INTO counter_id, held FROM cap_usage WHERE cap_key = cap->>'key' FOR UPDATE;
          EXIT WHEN FOUND;
          INSERT INTO cap_usage (cap_key, window_s, used, last_at) VALUES (cap->>'key', (cap->>'window_s')::integer, 0, clock_timestamp())
            ON CONFLICT (cap_key) DO NOTHING;
        END LOOP;
        window_start := clock_timestamp() - (cap->>'window_s')::integer * interval '1 second';
        WITH gone AS (DELETE FROM cap_hits WHERE usage_id = counter_id AND at <= window_start RETURNING 1)
        SELECT held - count(*) INTO held FROM gone;
        IF held >= (cap->>'limit')::integer THEN
          RAISE EXCEPTION 'cap full' USING ERRCODE = 'TG001';
        END IF;
        INSERT INTO cap_hits (usage_id, at) VALUES (counter_id, clock_timestamp());
        UPDATE cap_usage SET used = held + 1, last_at = clock_timestamp() WHERE id = counter_id;
      END LOOP;
      RETURN (candidate->>'attachment_id')::integer;
    EXCEPTION WHEN SQLSTATE 'TG001' THEN
      -- This candidate's counts are undone with its block; the next one is tried.
      NULL;
    END;
  END LOOP;
  RETURN NULL;
END $$;

CREATE FUNCTION toolgate_sweep_caps() RETURNS integer LANGUAGE sql AS $$
  WITH gone AS (
    DELETE FROM cap_usage WHERE id IN (
      SELECT id FROM cap_usage WHERE last_at <= clock_timestamp() - window_s * interval '1 second'
      LIMIT 10000 FOR UPDATE SKIP LOCKED)
    RETURNING id
  ), hits AS (
    DELETE FROM cap_hits WHERE usage_id IN (SELECT id FROM gone)
  )
  SELECT count(*)::integer FROM gone
$$;
`;

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction((transaction) => queryInterface.sequelize.query(UP, { transaction }));
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(
    `DROP FUNCTION toolgate_sweep_caps();
     DROP FUNCTION toolgate_claim_caps(jsonb);
     DROP TABLE cap_hits;
     DROP TABLE cap_usage;
     ALTER TABLE agent_toolkits DROP COLUMN caps;`,
  );
}
