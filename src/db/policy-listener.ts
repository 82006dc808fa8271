// One dedicated connection per instance that LISTENs on toolgate_policy, where the policy tables'
// triggers NOTIFY the ids of the agents whose policy changed (migration 21).
//
// The cache may be trusted only while this LISTEN holds, so the listener says when it starts to hold
// (listening) and when it may have stopped (lost): a connection error or end, or a heartbeat that
// gets no answer in time (a frozen or cut connection that no error would ever report). It then
// reconnects by itself, with exponential backoff and jitter, until closed.
import type { PgClient } from './connect';

export const POLICY_CHANNEL = 'toolgate_policy';

export type ListenerState = 'idle' | 'connecting' | 'listening' | 'lost' | 'closed';

/** What a notification says: these agents' policies changed, or anything may have ('*'). */
export type PolicyChange = { kind: 'agents'; agentIds: number[] } | { kind: 'all' };

export interface PolicyListenerHandlers {
  /** The LISTEN holds from now on: notifications for every change committed after this will come. */
  onListening(): void;
  /** The LISTEN may not hold any more: changes from now on may go untold until onListening. */
  onLost(err: unknown): void;
  onChange(change: PolicyChange): void;
}

export interface PolicyListenerOptions {
  /** First wait before reconnecting, doubled after every failure up to maxBackoffMs. */
  minBackoffMs: number;
  maxBackoffMs: number;
  /** How often the connection is asked to answer (0: never). */
  heartbeatMs: number;
  /** How long an answer to the heartbeat may take before the connection counts as lost. */
  heartbeatTimeoutMs: number;
}

export const DEFAULT_LISTENER_OPTIONS: PolicyListenerOptions = { minBackoffMs: 100, maxBackoffMs: 10_000, heartbeatMs: 5_000, heartbeatTimeoutMs: 2_000 };

export class PolicyListener {
  #state: ListenerState = 'idle';
  #client: PgClient | undefined;
  #failures = 0;
  #retry: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  /** Bumped on every new connection, so late events from an old one are ignored. */
  #generation = 0;
  #backendPid: number | null = null;

  constructor(
    private readonly connect: () => PgClient,
    private readonly handlers: PolicyListenerHandlers,
    private readonly options: PolicyListenerOptions = DEFAULT_LISTENER_OPTIONS,
  ) {}

  get state(): ListenerState {
    return this.#state;
  }

  /** The server process of the listening connection while it listens (pg_stat_activity.pid). */
  get backendPid(): number | null {
    return this.#state === 'listening' ? this.#backendPid : null;
  }

  /** Starts listening (once); the first LISTEN is reported through onListening. */
  start(): void {
    if (this.#state !== 'idle') return;
    void this.#open();
  }

  /** Stops for good; the owner stops trusting its cache itself (no onLost: nothing was lost). */
  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#generation += 1;
    clearTimeout(this.#retry);
    clearInterval(this.#heartbeat);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  async #open(): Promise<void> {
    const generation = ++this.#generation;
    this.#state = 'connecting';
    const client = this.connect();
    this.#client = client;
    const current = () => generation === this.#generation && this.#state !== 'closed';
    client.on('error', (err) => {
      if (current()) this.#lose(err);
    });
    client.on('end', () => {
      if (current()) this.#lose(new Error('the listening connection ended'));
    });
    client.on('notification', (message) => {
      if (current() && message.channel === POLICY_CHANNEL) this.handlers.onChange(parsePayload(message.payload));
    });
    try {
      await client.connect();
      // Nothing awaits this connection, so it must not hold the process: a host that stops its
      // server (or whose main ends) exits without close(), as it would without toolgate.
      unrefSocket(client);
      await client.query(`LISTEN ${POLICY_CHANNEL}`);
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      this.#backendPid = rows[0]?.pid ?? null;
    } catch (err) {
      if (current()) this.#lose(err);
      return;
    }
    if (!current()) return;
    this.#state = 'listening';
    this.#failures = 0;
    if (this.options.heartbeatMs > 0) {
      this.#heartbeat = setInterval(() => void this.#beat(client, generation), this.options.heartbeatMs);
      this.#heartbeat.unref();
    }
    this.handlers.onListening();
  }

  async #beat(client: PgClient, generation: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the listening connection did not answer its heartbeat')), this.options.heartbeatTimeoutMs);
    });
    try {
      await Promise.race([client.query('SELECT 1'), timeout]);
    } catch (err) {
      if (generation === this.#generation && this.#state === 'listening') this.#lose(err);
    } finally {
      clearTimeout(timer);
    }
  }

  #lose(err: unknown): void {
    this.#state = 'lost';
    this.#generation += 1;
    clearInterval(this.#heartbeat);
    const client = this.#client;
    this.#client = undefined;
    void client?.end().catch(() => undefined);
    // Reported on every loss, so a failed reconnect attempt is seen as well as a dropped LISTEN.
    this.handlers.onLost(err);
    const backoff = Math.min(this.options.maxBackoffMs, this.options.minBackoffMs * 2 ** this.#failures);
    this.#failures += 1;
    // Full jitter on the upper half, so five instances cut off together do not come back together.
    this.#retry = setTimeout(() => void this.#open(), backoff / 2 + Math.random() * (backoff / 2));
    this.#retry.unref();
  }
}

function unrefSocket(client: PgClient): void {
  (client as PgClient & { connection?: { stream?: { unref?(): unknown } } }).connection?.stream?.unref?.();
}

/** "12,57" → those agents; "*" or anything unreadable → all (an unreadable payload must not be ignored). */
export function parsePayload(payload: string | undefined): PolicyChange {
  if (payload === undefined || !/^\d{1,10}(?:,\d{1,10})*$/.test(payload)) return { kind: 'all' };
  return { kind: 'agents', agentIds: payload.split(',').map(Number) };
}
