// The strict mode, for deployments where LISTEN cannot work (PgBouncer in transaction mode, where a
// session's LISTEN means nothing): compiled policies cached per instance, each checked against the
// agent's policy version with one indexed read per run. The triggers raise the version in the same
// transaction as the change, so once a revoking request has returned, the next run on any instance
// reads the new version and reloads: no notification is needed, at the cost of that one read.
import { PolicyCache, type CachedPolicy, type PolicyCacheOptions } from './policy-cache';
import type { PolicyRead, PolicySource } from './policy-source';

/** Reads the agent's current policy version; null when there is no such agent. */
export type VersionRead = (agentId: number) => Promise<number | null>;

export class VersionedPolicies implements PolicySource {
  readonly #cache: PolicyCache;

  constructor(
    private readonly read: PolicyRead,
    private readonly readVersion: VersionRead,
    options: PolicyCacheOptions,
  ) {
    this.#cache = new PolicyCache(options);
    this.#cache.enable();
  }

  get size(): number {
    return this.#cache.size;
  }

  async get(agentId: number): ReturnType<PolicySource['get']> {
    const version = await this.readVersion(agentId);
    if (version === null) {
      // No version: the agent is gone; never serve a cached one.
      this.#cache.invalidate([agentId]);
      return { policy: await this.read(agentId), outcome: 'miss' };
    }
    const cached = this.#cache.peek(agentId);
    if (cached !== undefined && cached.version === version) return { policy: cached, outcome: 'hit' };
    let policy: CachedPolicy | null = await this.#cache.load(agentId, () => this.read(agentId));
    // A load already under way may have read an older version than the one just seen.
    if (policy !== null && (policy.version ?? -1) < version) {
      policy = await this.read(agentId);
      if (policy !== null) this.#cache.set(agentId, policy);
    }
    return { policy, outcome: 'miss' };
  }

  clear(): void {
    this.#cache.clear();
  }

  async close(): Promise<void> {
    this.#cache.disable();
  }
}
