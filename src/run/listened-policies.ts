// The listen mode: compiled policies cached per instance, trusted only while this instance's LISTEN
// on toolgate_policy holds.
//
// - Until the first LISTEN holds, and whenever it is lost, every run reads through, and the cache is
//   emptied: nothing read while changes could go untold is kept. It holds only once a probe sent
//   through the pool has come back on it (a pooler that drops notifications never gets there).
// - Once the LISTEN holds again, the cache starts empty.
// - A notification drops the agents it names ('*': everything).
// - A write to the policy tables through this instance's own Sequelize empties the cache once it
//   commits, before its request answers (policy-write-watch), so this instance reads its own writes.
// - Entries also age out (maxAgeMs), whatever the notifications say.
//
// Events, after the cache has acted on them: 'listening', 'lost' (err), 'invalidated'
// ({ source, agentIds? }). Tests and benchmarks wait on them instead of sleeping.
import { EventEmitter } from 'node:events';
import type { Sequelize } from 'sequelize';
import type { PgClient } from '../db/connect';
import { PolicyListener, type ListenerState, type PolicyListenerOptions } from '../db/policy-listener';
import { watchPolicyWrites } from '../db/policy-write-watch';
import { PolicyCache, type CachedPolicy, type PolicyCacheOptions } from './policy-cache';
import type { PolicyRead, PolicySource } from './policy-source';

/** Why a cached policy was dropped: a notification (of some agents, or of all), this instance's own write, or the listener lost or regained. */
export type InvalidationSource = 'notification' | 'notification_all' | 'local_write' | 'listener_lost' | 'listener_listening';

export interface Invalidation {
  source: InvalidationSource;
  /** The agents a notification named; absent when everything was dropped. */
  agentIds?: readonly number[];
}

export class ListenedPolicies extends EventEmitter implements PolicySource {
  readonly #cache: PolicyCache;
  readonly #listener: PolicyListener;
  readonly #unwatch: () => void;

  constructor(
    sequelize: Sequelize,
    private readonly read: PolicyRead,
    connect: () => PgClient,
    options: PolicyCacheOptions & { listener: PolicyListenerOptions; channel?: string },
  ) {
    super();
    this.#cache = new PolicyCache(options);
    this.#listener = new PolicyListener(
      connect,
      // The listener's probe goes through the pool: the path every other instance's changes take.
      (channel, payload) => sequelize.query('SELECT pg_notify(:channel, :payload)', { replacements: { channel, payload } }),
      {
        onListening: () => {
          this.#cache.enable();
          this.#told({ source: 'listener_listening' });
          this.emit('listening');
        },
        onLost: (err) => {
          this.#cache.disable();
          this.#told({ source: 'listener_lost' });
          this.emit('lost', err);
        },
        onChange: (change) => {
          if (change.kind === 'all') {
            this.#cache.clear();
            this.#told({ source: 'notification_all' });
          } else {
            this.#cache.invalidate(change.agentIds);
            this.#told({ source: 'notification', agentIds: change.agentIds });
          }
        },
      },
      options.listener,
      options.channel,
    );
    this.#unwatch = watchPolicyWrites(sequelize, () => {
      this.#cache.clear();
      this.#told({ source: 'local_write' });
    });
  }

  get size(): number {
    return this.#cache.size;
  }

  get listenerState(): ListenerState {
    return this.#listener.state;
  }

  /** The listening connection's server process while it listens (for pg_terminate_backend in tests). */
  get listenerPid(): number | null {
    return this.#listener.backendPid;
  }

  get(agentId: number): ReturnType<PolicySource['get']> {
    // The listener starts with the first run, so a toolgate never used opens no connection.
    this.start();
    return this.#cache.get(agentId, () => this.read(agentId));
  }

  peek(agentId: number): CachedPolicy | undefined {
    this.start();
    // Empty, and so undefined, whenever the LISTEN does not hold.
    return this.#cache.peek(agentId);
  }

  clear(): void {
    this.#cache.clear();
  }

  start(): void {
    if (this.#listener.state !== 'idle') return;
    this.#listener.start();
    this.emit('connecting');
  }

  async close(): Promise<void> {
    this.#unwatch();
    this.#cache.disable();
    await this.#listener.close();
    this.emit('closed');
  }

  #told(invalidation: Invalidation): void {
    this.emit('invalidated', invalidation);
  }
}
