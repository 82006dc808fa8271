// Compiled policies kept per instance, by agent: a bounded LRU (lru-cache) with an age limit, and one
// load in flight per agent however many runs ask at once.
//
// A load that was under way when its agent was invalidated (or the cache cleared, enabled or
// disabled) is handed to the runs that were waiting for it but never stored: it may have read the
// policy from before the change. Runs that ask after the invalidation start a load of their own.
// While disabled, the cache holds nothing and every run reads through.
import { LRUCache } from 'lru-cache';
import type { CompiledPolicy } from '../core/compiled-policy';
import type { RunAgent } from '../services/policy-loader';

/** One agent's policy, compiled, with what a run needs of the agent and the version it was read at. */
export interface CachedPolicy {
  agent: RunAgent;
  compiled: CompiledPolicy;
  version: number | null;
}

export type CacheOutcome = 'hit' | 'miss' | 'bypass';

export interface PolicyCacheOptions {
  /** The most agents held at once; the least recently used go first. */
  maxAgents: number;
  /** The longest an entry is served, whatever the notifications say (0: no limit). */
  maxAgeMs: number;
}

interface Flight {
  stale: boolean;
  promise: Promise<CachedPolicy | null>;
}

export class PolicyCache {
  readonly #lru: LRUCache<number, CachedPolicy>;
  readonly #flights = new Map<number, Flight>();
  #enabled = false;

  constructor(options: PolicyCacheOptions) {
    // ttlResolution 0: the age is read from the clock on each lookup (tens of ns) rather than from a
    // copy cleared by a timer every millisecond, which under load is one more timer per millisecond.
    this.#lru = new LRUCache<number, CachedPolicy>({
      max: options.maxAgents,
      ...(options.maxAgeMs > 0 ? { ttl: options.maxAgeMs, ttlResolution: 0 } : {}),
    });
  }

  get enabled(): boolean {
    return this.#enabled;
  }

  get size(): number {
    return this.#lru.size;
  }

  /** Starts serving from the cache, empty: nothing read before now is trusted. */
  enable(): void {
    this.clear();
    this.#enabled = true;
  }

  /** Stops serving from the cache and drops everything: every run reads through until enable(). */
  disable(): void {
    this.#enabled = false;
    this.clear();
  }

  clear(): void {
    this.#lru.clear();
    for (const flight of this.#flights.values()) flight.stale = true;
    this.#flights.clear();
  }

  /** Drops these agents' entries, and keeps the loads under way for them from being stored. */
  invalidate(agentIds: Iterable<number>): number {
    let dropped = 0;
    for (const id of agentIds) {
      if (this.#lru.delete(id)) dropped += 1;
      const flight = this.#flights.get(id);
      if (flight) {
        flight.stale = true;
        this.#flights.delete(id);
      }
    }
    return dropped;
  }

  /** The cached entry, if any, without loading. */
  peek(agentId: number): CachedPolicy | undefined {
    return this.#enabled ? this.#lru.get(agentId) : undefined;
  }

  /** The agent's policy: from the cache, from the load under way, or from a new load. */
  async get(agentId: number, load: () => Promise<CachedPolicy | null>): Promise<{ policy: CachedPolicy | null; outcome: CacheOutcome }> {
    if (!this.#enabled) return { policy: await load(), outcome: 'bypass' };
    const hit = this.#lru.get(agentId);
    if (hit !== undefined) return { policy: hit, outcome: 'hit' };
    return { policy: await this.load(agentId, load), outcome: 'miss' };
  }

  /** Loads through the one flight for this agent and stores the result unless it went stale. */
  load(agentId: number, load: () => Promise<CachedPolicy | null>): Promise<CachedPolicy | null> {
    const current = this.#flights.get(agentId);
    if (current) return current.promise;
    const flight: Flight = { stale: false, promise: Promise.resolve(null) };
    flight.promise = load()
      .then((policy) => {
        // A missing agent is not cached: its creation must not wait for an invalidation.
        if (policy !== null && !flight.stale && this.#enabled) this.#lru.set(agentId, policy);
        return policy;
      })
      .finally(() => {
        if (this.#flights.get(agentId) === flight) this.#flights.delete(agentId);
      });
    this.#flights.set(agentId, flight);
    return flight.promise;
  }

  /** Stores an entry read outside a flight (strict mode's re-read); ignored while disabled. */
  set(agentId: number, policy: CachedPolicy): void {
    if (this.#enabled) this.#lru.set(agentId, policy);
  }
}
