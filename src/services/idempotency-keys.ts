// Idempotency keys in PostgreSQL (SEMANTICS §13): a caller's key per route, the hash of the body it
// came with, who holds it while it runs, and the answer once there is one. A request claims its key
// or reads it in one statement: a first request's claim is one insert, which a second request with
// the same key, on any instance, loses, and then reads what the first holds.
import type { Sequelize } from 'sequelize';
import { storableJson } from '../core/storable-text';
import { aliveSql, type Instances } from '../db/instances';
import { pooledQuery, type PooledStatement } from '../db/pooled-statement';

/** Keys are kept at least this long after their first use. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3_600_000;

export interface StoredKey {
  request_hash: string;
  state: 'running' | 'done';
  status: number | null;
  body: unknown;
  /** Whether the instance that holds a running key still beats. */
  holder_alive: boolean;
}

// Each a named statement straight on a connection of the pool (db/pooled-statement.ts): a keyed
// request waits on two of them (its claim, its answer), and Sequelize's query building cost more
// than their work.
//
// The claim, or the key as held. A key held (and not past its time) is read, and no insert is
// tried, so a replay stays one indexed read; a key past its time is taken over by the insert. Both
// parts see the statement's snapshot: a key claimed by a request that committed after this one
// began, which the insert then waits for and loses to, is seen by neither, and is answered as in
// flight (claimed a moment ago, it still runs).
const CLAIM_OR_READ: PooledStatement = {
  name: 'toolgate_idempotency_claim_or_read',
  text: `WITH held AS (
           SELECT request_hash, state, status, body, ${aliveSql('instance_id', '$6::double precision')} AS holder_alive
             FROM idempotency_keys WHERE scope = $1::varchar AND key = $2::varchar AND expires_at > now()),
         claimed AS (
           INSERT INTO idempotency_keys (scope, key, request_hash, state, instance_id, expires_at)
           SELECT $1::varchar, $2::varchar, $3::varchar, 'running', $4::varchar, now() + $5::double precision * interval '1 millisecond'
            WHERE NOT EXISTS (SELECT 1 FROM held)
           ON CONFLICT (scope, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, state = 'running', instance_id = EXCLUDED.instance_id,
                  status = NULL, body = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
            WHERE idempotency_keys.expires_at <= now()
           RETURNING key)
         SELECT true AS claimed, NULL::varchar AS request_hash, NULL::varchar AS state, NULL::integer AS status, NULL::json AS body, false AS holder_alive
           FROM claimed
         UNION ALL
         SELECT false, request_hash, state, status, body, holder_alive FROM held`,
};

const ANSWER: PooledStatement = {
  name: 'toolgate_idempotency_answer',
  text: `UPDATE idempotency_keys SET state = 'done', status = $3::integer, body = $4::json WHERE scope = $1::varchar AND key = $2::varchar`,
};
const RELEASE: PooledStatement = {
  name: 'toolgate_idempotency_release',
  text: `DELETE FROM idempotency_keys WHERE scope = $1::varchar AND key = $2::varchar AND state = 'running'`,
};

/**
 * A key this request holds, as its route may keep its answer: `kept` is set once the answer is
 * kept with the outcome of the call it answers, in the statement that completes the call's record
 * (tool-calls.ts), so the answer is not written a second time before it is sent.
 */
export interface HeldKey {
  scope: string;
  key: string;
  kept: KeptAnswer | null;
}

/** An answer kept for a key's retries: its status and its body. */
export interface KeptAnswer {
  status: number;
  body: unknown;
}

/** What a claim came to: the key is this request's, or another's as stored (null: claimed a moment ago, still running). */
export type KeyClaim = { claimed: true } | { claimed: false; stored: StoredKey | null };

export class IdempotencyKeys {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly instances: Instances,
  ) {}

  /**
   * Claims a key for a request about to run (`claimed`), or reads it as another request holds it:
   * its hash, its state and its answer; `in_flight` when it was claimed too lately to be read.
   */
  async claim(scope: string, key: string, requestHash: string): Promise<KeyClaim> {
    await this.instances.register();
    const { rows } = await pooledQuery<StoredKey & { claimed: boolean }>(this.sequelize, CLAIM_OR_READ, [
      scope,
      key,
      requestHash,
      this.instances.id,
      IDEMPOTENCY_KEY_TTL_MS,
      this.instances.timings.staleAfterMs,
    ]);
    const row = rows[0];
    if (row === undefined) return { claimed: false, stored: null };
    if (row.claimed) return { claimed: true };
    const { claimed: _claimed, ...stored } = row;
    return { claimed: false, stored };
  }

  /** Keeps the answer a request with this key got, for its retries. */
  async answer(scope: string, key: string, status: number, body: unknown): Promise<void> {
    await pooledQuery(this.sequelize, ANSWER, [scope, key, status, keptBody(body)]);
  }

  /** Lets a key go (its request failed before anything ran): a retry runs it anew. */
  async release(scope: string, key: string): Promise<void> {
    await pooledQuery(this.sequelize, RELEASE, [scope, key]);
  }
}

/** An answer's body as the key keeps it: JSON, made storable (SEMANTICS §13). */
export function keptBody(body: unknown): string {
  return JSON.stringify(storableJson(body ?? null));
}
