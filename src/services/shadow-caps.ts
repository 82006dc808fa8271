// A candidate's caps counted in the shadow (SEMANTICS §15): every call the live terms let run is
// also counted against the caps its candidate sets, in counters apart from the live ones, and its
// record marked where they are full. The counters go when the candidate is set again or dropped, and
// become the live ones when it is promoted: the calls that ran stay counted.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { CallShadow, CallShadowEntry } from '../core/shadow';
import type { CapRule } from '../core/types';
import { pooledQuery, type PooledStatement } from '../db/pooled-statement';
import { counted, type CapScope } from './cap-usage';

/**
 * One candidate's entry for a call, as toolgate_count_shadow_caps reads it: with `caps`, the entry the
 * call gets only when one of these counters (the candidate's own) has no room; without, one it has.
 */
export interface ShadowCapEntry {
  entry: CallShadowEntry;
  caps?: { key: string; limit: number; window_s: number }[];
}

/** A candidate's counter: `shadow:<attachment>@<stamp>|…`, which no live key begins with. */
export function shadowCapKey(attachmentId: number, stamp: string, cap: CapRule, toolId: string, scope: CapScope): string {
  return `${shadowPrefix(attachmentId, stamp)}${counted(cap, toolId, scope)}`;
}

const shadowPrefix = (attachmentId: number, stamp: string) => `shadow:${attachmentId}@${stamp}|`;

const COUNT: PooledStatement = {
  name: 'toolgate_count_shadow_caps',
  text: 'SELECT toolgate_count_shadow_caps($1::bigint, $2::jsonb) AS shadow',
};

/**
 * Counts a call the live terms let run (its `started` record `recordId`) against the candidates' caps, in one
 * statement: the record's shadow as it is now, or null when no candidate's caps were full.
 */
export async function countShadowCaps(
  sequelize: Sequelize,
  recordId: number,
  entries: readonly ShadowCapEntry[],
): Promise<CallShadow | null> {
  const { rows } = await pooledQuery<{ shadow: CallShadow | null }>(sequelize, COUNT, [recordId, JSON.stringify(entries)]);
  return rows[0]?.shadow ?? null;
}

// Every counter of the attachment's candidates, whatever stamp: an instance not yet told of a change
// may still count under the one before. Each counter's calls go with it.
const DROP_SQL = `
  WITH gone AS (DELETE FROM cap_usage WHERE cap_key LIKE $1::text RETURNING id)
  DELETE FROM cap_hits WHERE usage_id IN (SELECT id FROM gone)`;

/** Drops the shadow's counts of the attachment's candidate (set again, dropped, or the attachment detached). */
export async function dropShadowCaps(sequelize: Sequelize, attachmentId: number, transaction?: Transaction): Promise<void> {
  await sequelize.query(DROP_SQL, { bind: [`shadow:${attachmentId}@%`], transaction });
}

// The candidate's counters as live ones: each becomes the live counter of the same cap, with its
// calls, unless the live terms already count under that key (a cap on the same tool, per and window),
// which goes on counting as it did.
const PROMOTE_SQL = `
  WITH moved AS (
    INSERT INTO cap_usage (cap_key, window_s, used, last_at)
    SELECT $2::text || substr(cap_key, length($1::text) + 1), window_s, used, last_at FROM cap_usage WHERE cap_key LIKE $1::text || '%'
    ON CONFLICT (cap_key) DO NOTHING
    RETURNING id, cap_key
  )
  UPDATE cap_hits h SET usage_id = m.id
    FROM moved m JOIN cap_usage s ON s.cap_key = $1::text || substr(m.cap_key, length($2::text) + 1)
   WHERE h.usage_id = s.id`;

/**
 * In the transaction that promotes the attachment's candidate, before it is cleared: its counts
 * become the live counts of its caps (a call that ran is a call that ran), and its counters go.
 */
export async function promoteShadowCaps(sequelize: Sequelize, attachmentId: number, transaction: Transaction): Promise<void> {
  const [row] = await sequelize.query<{ stamp: string | null }>(
    `SELECT to_char(candidate_at AT TIME ZONE 'UTC', 'YYYYMMDDHH24MISSUS') AS stamp FROM agent_toolkits WHERE id = $1`,
    { bind: [attachmentId], type: QueryTypes.SELECT, transaction },
  );
  if (row?.stamp) {
    await sequelize.query(PROMOTE_SQL, { bind: [shadowPrefix(attachmentId, row.stamp), `${attachmentId}|`], transaction });
  }
  await dropShadowCaps(sequelize, attachmentId, transaction);
}
