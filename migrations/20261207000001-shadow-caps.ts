// A candidate's caps counted in the shadow (SEMANTICS §15): each call the live terms let run is also
// counted against the caps a candidate sets, in counters of its own, and marked where they are full.
// - Its counters are rows of cap_usage and cap_hits as the live ones are, keyed
//   `shadow:<attachment>@<when the candidate was set>|…`, which no live key begins with (a live key
//   begins with the attachment's id), so no live claim ever reads one; the sweep drops them as it
//   drops any counter whose calls have all left the window.
// - cap_usage_shadow_key_idx: the counters of one candidate found by their key's beginning, when it
//   is set again, promoted or dropped (the unique index on cap_key orders by the database's collation,
//   which a LIKE prefix cannot use).
// - toolgate_count_shadow_caps(record_id, entries): for a call whose `started` record is written,
//   `entries` in the attachments' order, each a candidate's shadow entry for the call, with `caps`
//   when it is the entry the call gets only if that candidate's caps have no room for it. Each such
//   entry's counters are locked, counted (the call ran, so it counts, room or not) and checked; when
//   any of them was full, its entry joins the others. When one did, the record's shadow is written
//   (the first entry at its top, the others in `also`) and returned; else NULL, and the record is
//   left as it was.
import type { QueryInterface } from 'sequelize';

const UP = `
CREATE INDEX cap_usage_shadow_key_idx ON cap_usage (cap_key varchar_pattern_ops);

CREATE FUNCTION toolgate_count_shadow_caps(record_id bigint, entries jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  item jsonb;
  cap jsonb;
  counter_id bigint;
  held integer;
  full_cap boolean;
  marked boolean := false;
  kept jsonb := '[]';
  result jsonb;
  window_start timestamptz;
BEGIN
  FOR item IN SELECT * FROM jsonb_array_elements(entries) LOOP
    IF NOT item ? 'caps' THEN
      kept := kept || jsonb_build_array(item->'entry');
      CONTINUE;
    END IF;
    full_cap := false;
    FOR cap IN SELECT * FROM jsonb_array_elements(item->'caps') LOOP
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
        full_cap := true;
      END IF;
      INSERT INTO cap_hits (usage_id, at) VALUES (counter_id, clock_timestamp());
      UPDATE cap_usage SET used = held + 1, last_at = clock_timestamp() WHERE id = counter_id;
    END LOOP;
    IF full_cap THEN
      kept := kept || jsonb_build_array(item->'entry');
      marked := true;
    END IF;
  END LOOP;
  IF NOT marked THEN
    RETURN NULL;
  END IF;
  result := kept->0;
  IF jsonb_array_length(kept) > 1 THEN
    result := result || jsonb_build_object('also', kept - 0);
  END IF;
  UPDATE tool_calls SET shadow = result WHERE id = record_id;
  RETURN result;
END $$;
`;

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction((transaction) => queryInterface.sequelize.query(UP, { transaction }));
}

export async function down(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.transaction((transaction) =>
    queryInterface.sequelize.query(
      `DROP FUNCTION toolgate_count_shadow_caps(bigint, jsonb);
       DELETE FROM cap_hits WHERE usage_id IN (SELECT id FROM cap_usage WHERE cap_key LIKE 'shadow:%');
       DELETE FROM cap_usage WHERE cap_key LIKE 'shadow:%';
       DROP INDEX cap_usage_shadow_key_idx;`,
      { transaction },
    ),
  );
}
