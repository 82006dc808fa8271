// Where runs get an agent's compiled policy from. Three ways, one per cache mode:
// - off: read through, every run (one query, then compile);
// - listen: a per-instance cache trusted only while this instance's LISTEN holds (listened-policies);
// - strict: a per-instance cache checked against the agent's policy version, one indexed read per
//   run (versioned-policies), for deployments where LISTEN cannot work.
import type { CacheOutcome, CachedPolicy } from './policy-cache';

/** Reads one agent's policy from the database and compiles it; null when there is no such agent. */
export type PolicyRead = (agentId: number) => Promise<CachedPolicy | null>;

export interface PolicySource {
  get(agentId: number): Promise<{ policy: CachedPolicy | null; outcome: CacheOutcome }>;
  /**
   * A policy this source may serve now without reading anything, or undefined: lets a cache hit
   * start its run with no promise. Only a source whose entries need no check per run has one.
   */
  peek?(agentId: number): CachedPolicy | undefined;
  /** How many agents it holds now. */
  readonly size: number;
  /** Starts what it runs in the background now rather than at the first run (the listener). */
  start?(): void;
  /** Drops every policy it holds: the manifest's tools changed (an MCP server's), so each is compiled again. */
  clear?(): void;
  close(): Promise<void>;
}

export function readThrough(read: PolicyRead): PolicySource {
  return {
    get: async (agentId) => ({ policy: await read(agentId), outcome: 'bypass' }),
    size: 0,
    close: async () => undefined,
  };
}
