// The listen mode: compiled policies cached per instance, trusted only while this instance's LISTEN
// on toolgate_policy holds.
//
// - Until the first LISTEN holds, and whenever it is lost, every run reads through, and the cache is
//   emptied: nothing read while changes could go untold is kept.
// - Once the LISTEN holds again, the cache starts empty.
// - A notification drops the agents it names ('*': everything).
// - A write to the policy tables through this instance's own Sequelize empties the cache once it
//   commits, before its request answers (policy-write-watch), so this instance reads its own writes.
// - Entries also age out (maxAgeMs), whatever the notifications say.
import type { Sequelize } from 'sequelize';
import type { PgClient } from '../db/connect';
import { PolicyListener, type ListenerState, type PolicyListenerOptions } from '../db/policy-listener';
import { watchPolicyWrites } from '../db/policy-write-watch';
import type { InvalidationSource } from '../metrics/toolgate-metrics';
import { PolicyCache, type PolicyCacheOptions } from './policy-cache';
import type { PolicyRead, PolicySource } from './policy-source';

export interface ListenedPoliciesEvents {
  invalidated?(source: InvalidationSource): void;
  listener?(state: ListenerState, err?: unknown): void;
}

export class ListenedPolicies implements PolicySource {
  readonly #cache: PolicyCache;
  readonly #listener: PolicyListener;
  readonly #unwatch: () => void;

  constructor(
    sequelize: Sequelize,
    private readonly read: PolicyRead,
    connect: () => PgClient,
    options: PolicyCacheOptions & { listener: PolicyListenerOptions },
    private readonly events: ListenedPoliciesEvents = {},
  ) {
    this.#cache = new PolicyCache(options);
    this.#listener = new PolicyListener(
      connect,
      {
        onListening: () => {
          this.#cache.enable();
          this.#told('listener_listening', 'listening');
        },
        onLost: (err) => {
          this.#cache.disable();
          this.#told('listener_lost', 'lost', err);
        },
        onChange: (change) => {
          if (change.kind === 'all') {
            this.#cache.clear();
            this.events.invalidated?.('notification_all');
          } else {
            this.#cache.invalidate(change.agentIds);
            this.events.invalidated?.('notification');
          }
        },
      },
      options.listener,
    );
    this.#unwatch = watchPolicyWrites(sequelize, () => {
      this.#cache.clear();
      this.events.invalidated?.('local_write');
    });
  }

  get size(): number {
    return this.#cache.size;
  }

  get listenerState(): ListenerState {
    return this.#listener.state;
  }

  get(agentId: number): ReturnType<PolicySource['get']> {
    // The listener starts with the first run, so a toolgate never used opens no connection.
    if (this.#listener.state === 'idle') this.#start();
    return this.#cache.get(agentId, () => this.read(agentId));
  }

  /** Opens the listening connection now rather than at the first run. */
  start(): void {
    if (this.#listener.state === 'idle') this.#start();
  }

  async close(): Promise<void> {
    this.#unwatch();
    await this.#listener.close();
    this.#cache.disable();
  }

  #start(): void {
    this.#listener.start();
    this.events.listener?.('connecting');
  }

  #told(source: InvalidationSource, state: ListenerState, err?: unknown): void {
    this.events.invalidated?.(source);
    this.events.listener?.(state, err);
  }
}
