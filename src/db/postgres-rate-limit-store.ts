// An express-rate-limit store on PostgreSQL, so every instance on one database counts a caller
// against one budget: N instances must not multiply it. The counting is rate-limiter-flexible's
// RateLimiterPostgres (one atomic upsert, on the toolgate_rate_limits table of migration 22), run on
// the toolgate's own Sequelize pool, so the query timeouts hold and a database that cannot be
// reached is a 503, never an unlimited caller. Windows are fixed per caller and start at their first
// request, as express-rate-limit's memory store does.
//
// A caller far from its limit is not written at every request: each instance may hold a few of its
// hits uncounted, at most a sixteenth of what was left of its budget when this instance last counted
// it, and writes them in one upsert within FLUSH_MS. Its own hits, held or not, are always in the
// total it decides by, so one instance enforces the limit exactly; with N instances a caller can get
// at most about N/16 of its limit past it in a window. Near the limit (less than 16 requests left),
// every request is counted before it is answered. An upsert every request cost a round trip and a
// commit, on one row that all of a caller's concurrent requests wait on in turn (docs/PERFORMANCE.md).
import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';
import { RateLimiterPostgres, type RateLimiterRes } from 'rate-limiter-flexible';
import type { Sequelize } from 'sequelize';
import { orUnavailable } from './unavailable';

export const RATE_LIMIT_TABLE = 'toolgate_rate_limits';
/** Expired windows are deleted this often by each instance (a few rows per caller at most). */
const PRUNE_EVERY_MS = 5 * 60_000;
/** Hits held uncounted are written at most this long after the first of them. */
const FLUSH_MS = 50;
/** An instance holds uncounted at most this fraction (1/SHARE) of what is left of a caller's budget. */
const SHARE = 16;

/** What this instance knows of one caller's window. */
interface Window {
  /** The window's total as PostgreSQL last answered it. */
  counted: number;
  /** Hits of this instance not yet sent, and sent but not yet answered. */
  held: number;
  sending: number;
  /** When the window ends (ms since the epoch), as PostgreSQL keeps it. */
  expire: number;
  /** A write of held hits failed: the next request is counted before it is answered. */
  failed: boolean;
}

export class PostgresRateLimitStore implements Store {
  /** Counts are shared: keys incremented here are seen by every instance. */
  readonly localKeys = false;
  readonly prefix: string;
  #limiter: RateLimiterPostgres | undefined;
  #limit = 0;
  #windowMs = 0;
  #prune: NodeJS.Timeout | undefined;
  #flush: NodeJS.Timeout | undefined;
  readonly #windows = new Map<string, Window>();

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
    // A limit that is a function may differ per request: every request is then counted at once.
    this.#limit = typeof options.limit === 'number' ? options.limit : 0;
    this.#windowMs = options.windowMs;
    // clearExpired() is RateLimiterPostgres's own (untyped); it never rejects.
    const limiter = this.#limiter as unknown as { clearExpired(expire: number): Promise<void> };
    this.#prune = setInterval(() => {
      void limiter.clearExpired(Date.now());
      this.#forgetEnded();
    }, PRUNE_EVERY_MS);
    this.#prune.unref();
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const now = Date.now();
    let window = this.#windows.get(key);
    if (window !== undefined && window.expire <= now) {
      this.#windows.delete(key);
      window = undefined;
    }
    if (window !== undefined && !window.failed && window.held + 1 <= Math.floor((this.#limit - window.counted) / SHARE)) {
      window.held++;
      this.#flush ??= setTimeout(() => this.#flushHeld(), FLUSH_MS).unref();
      return infoOf(window);
    }
    // Counted before it is answered, with the hits this instance held.
    const hits = 1 + (window?.held ?? 0);
    if (window !== undefined) window.held = 0;
    try {
      return infoOf(this.#counted(key, await this.#send(key, hits, window)));
    } catch (err) {
      if (window !== undefined) window.held += hits - 1;
      throw err;
    }
  }

  async decrement(key: string): Promise<void> {
    await orUnavailable(this.#ready().reward(key, 1));
  }

  async resetKey(key: string): Promise<void> {
    this.#windows.delete(key);
    await orUnavailable(this.#ready().delete(key));
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const res = await orUnavailable(this.#ready().get(key));
    return res === null ? undefined : infoOf({ counted: res.consumedPoints, held: 0, sending: 0, expire: expireOf(res) });
  }

  shutdown(): void {
    clearInterval(this.#prune);
    clearTimeout(this.#flush);
  }

  /** Writes `hits` of `key`'s, and returns the window's total as PostgreSQL answers it. */
  async #send(key: string, hits: number, window: Window | undefined): Promise<RateLimiterRes> {
    if (window !== undefined) window.sending += hits;
    try {
      return await orUnavailable(this.#ready().penalty(key, hits));
    } finally {
      if (window !== undefined) window.sending -= hits;
    }
  }

  /** What this instance knows once PostgreSQL has answered: its total (the largest seen in the window), and its end. */
  #counted(key: string, res: RateLimiterRes): Window {
    const expire = expireOf(res);
    const known = this.#windows.get(key);
    // The same window, read a few milliseconds apart; the next one ends a whole window later.
    if (known !== undefined && Math.abs(known.expire - expire) < this.#windowMs / 2) {
      known.counted = Math.max(known.counted, res.consumedPoints);
      known.failed = false;
      return known;
    }
    const window = { counted: res.consumedPoints, held: 0, sending: 0, expire, failed: false };
    this.#windows.set(key, window);
    return window;
  }

  /** Writes every caller's held hits, one upsert each; one that fails keeps them, and its caller's next request is counted at once. */
  #flushHeld(): void {
    this.#flush = undefined;
    for (const [key, window] of this.#windows) {
      if (window.held === 0) continue;
      const hits = window.held;
      window.held = 0;
      this.#send(key, hits, window).then(
        (res) => void this.#counted(key, res),
        () => {
          window.held += hits;
          window.failed = true;
        },
      );
    }
  }

  /** Forgets the windows that ended with nothing held. */
  #forgetEnded(): void {
    const now = Date.now();
    for (const [key, window] of this.#windows)
      if (window.expire <= now && window.held === 0 && window.sending === 0) this.#windows.delete(key);
  }

  #ready(): RateLimiterPostgres {
    if (!this.#limiter) throw new Error('PostgresRateLimitStore is used before express-rate-limit called init()');
    return this.#limiter;
  }
}

/** The caller's total as this instance knows it: what PostgreSQL counted, and its own hits not yet counted there. */
function infoOf(window: Pick<Window, 'counted' | 'held' | 'sending' | 'expire'>): ClientRateLimitInfo {
  return { totalHits: window.counted + window.held + window.sending, resetTime: new Date(window.expire) };
}

function expireOf(res: RateLimiterRes): number {
  return Date.now() + Math.max(0, res.msBeforeNext);
}
