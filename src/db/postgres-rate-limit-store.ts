// An express-rate-limit store on PostgreSQL, so every instance on one database counts a caller
// against one budget: N instances must not multiply it. The counting is rate-limiter-flexible's
// RateLimiterPostgres (one atomic upsert per request, on the toolgate_rate_limits table of migration
// 22), run on the toolgate's own Sequelize pool, so the query timeouts hold and a database that cannot
// be reached is a 503, never an unlimited caller. Windows are fixed per caller and start at their
// first request, as express-rate-limit's memory store does.
import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';
import { RateLimiterPostgres, type RateLimiterRes } from 'rate-limiter-flexible';
import type { Sequelize } from 'sequelize';
import { orUnavailable } from './unavailable';

export const RATE_LIMIT_TABLE = 'toolgate_rate_limits';
/** Expired windows are deleted this often by each instance (a few rows per caller at most). */
const PRUNE_EVERY_MS = 5 * 60_000;

export class PostgresRateLimitStore implements Store {
  /** Counts are shared: keys incremented here are seen by every instance. */
  readonly localKeys = false;
  readonly prefix: string;
  #limiter: RateLimiterPostgres | undefined;
  #prune: NodeJS.Timeout | undefined;

  constructor(
    private readonly sequelize: Sequelize,
    prefix = 'client',
  ) {
    this.prefix = prefix;
  }

  init(options: Options): void {
    this.#limiter = new RateLimiterPostgres({
      storeClient: this.sequelize,
      storeType: 'sequelize',
      tableName: RATE_LIMIT_TABLE,
      // The table is the schema's (migration 22), never created at run time.
      tableCreated: true,
      clearExpiredByTimeout: false,
      keyPrefix: this.prefix,
      // The budget is express-rate-limit's to enforce: this only counts.
      points: Number.MAX_SAFE_INTEGER,
      duration: options.windowMs / 1000,
    });
    // clearExpired() is RateLimiterPostgres's own (untyped); it never rejects.
    const limiter = this.#limiter as unknown as { clearExpired(expire: number): Promise<void> };
    this.#prune = setInterval(() => void limiter.clearExpired(Date.now()), PRUNE_EVERY_MS);
    this.#prune.unref();
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    return infoOf(await orUnavailable(this.#ready().penalty(key, 1)));
  }

  async decrement(key: string): Promise<void> {
    await orUnavailable(this.#ready().reward(key, 1));
  }

  async resetKey(key: string): Promise<void> {
    await orUnavailable(this.#ready().delete(key));
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const res = await orUnavailable(this.#ready().get(key));
    return res === null ? undefined : infoOf(res);
  }

  shutdown(): void {
    clearInterval(this.#prune);
  }

  #ready(): RateLimiterPostgres {
    if (!this.#limiter) throw new Error('PostgresRateLimitStore is used before express-rate-limit called init()');
    return this.#limiter;
  }
}

function infoOf(res: RateLimiterRes): ClientRateLimitInfo {
  return { totalHits: res.consumedPoints, resetTime: new Date(Date.now() + Math.max(0, res.msBeforeNext)) };
}
