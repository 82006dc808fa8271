// Idempotency keys in PostgreSQL (SEMANTICS §13): a caller's key per route, the hash of the body it
// came with, who holds it while it runs, and the answer once there is one. Reading a key is one
// indexed read (a replay costs nothing more); claiming one is one insert, which a second request
// with the same key, on any instance, loses.
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
// request waits on two or three of them, and Sequelize's query building cost more than their work.
const FIND: PooledStatement = {
  name: 'toolgate_idempotency_find',
  text: `SELECT request_hash, state, status, body, ${aliveSql('instance_id', '$3::double precision')} AS holder_alive
           FROM idempotency_keys WHERE scope = $1::varchar AND key = $2::varchar AND expires_at > now()`,
};
// A key past its time may be claimed anew: it is taken over in the same statement.
const CLAIM: PooledStatement = {
  name: 'toolgate_idempotency_claim',
  text: `INSERT INTO idempotency_keys (scope, key, request_hash, state, instance_id, expires_at)
         VALUES ($1::varchar, $2::varchar, $3::varchar, 'running', $4::varchar, now() + $5::double precision * interval '1 millisecond')
         ON CONFLICT (scope, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, state = 'running', instance_id = EXCLUDED.instance_id,
                status = NULL, body = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
          WHERE idempotency_keys.expires_at <= now()
         RETURNING key`,
};
const ANSWER: PooledStatement = {
  name: 'toolgate_idempotency_answer',
  text: `UPDATE idempotency_keys SET state = 'done', status = $3::integer, body = $4::json WHERE scope = $1::varchar AND key = $2::varchar`,
};
const RELEASE: PooledStatement = {
  name: 'toolgate_idempotency_release',
  text: `DELETE FROM idempotency_keys WHERE scope = $1::varchar AND key = $2::varchar AND state = 'running'`,
};

export class IdempotencyKeys {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly instances: Instances,
  ) {}

  /** The key as stored, or null (a key past its time is none). */
  async find(scope: string, key: string): Promise<StoredKey | null> {
    const { rows } = await pooledQuery<StoredKey>(this.sequelize, FIND, [scope, key, this.instances.timings.staleAfterMs]);
    return rows[0] ?? null;
  }

  /** Claims a key for a request about to run; false when another request has it (the caller reads it then). */
  async claim(scope: string, key: string, requestHash: string): Promise<boolean> {
    await this.instances.register();
    const { rows } = await pooledQuery(this.sequelize, CLAIM, [scope, key, requestHash, this.instances.id, IDEMPOTENCY_KEY_TTL_MS]);
    return rows.length > 0;
  }

  /** Keeps the answer a request with this key got, for its retries. */
  async answer(scope: string, key: string, status: number, body: unknown): Promise<void> {
    await pooledQuery(this.sequelize, ANSWER, [scope, key, status, JSON.stringify(storableJson(body ?? null))]);
  }

  /** Lets a key go (its request failed before anything ran): a retry runs it anew. */
  async release(scope: string, key: string): Promise<void> {
    await pooledQuery(this.sequelize, RELEASE, [scope, key]);
  }
}
