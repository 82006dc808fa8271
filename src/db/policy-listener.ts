// One dedicated connection per instance that LISTENs on toolgate_policy, where the policy tables'
// triggers NOTIFY the ids of the agents whose policy changed (migration 21).
//
// The cache may be trusted only while this LISTEN holds, so the listener says when it starts to hold
// (listening) and when it may have stopped (lost): a connection error or end, or a heartbeat that
// gets no answer in time (a frozen or cut connection that no error would ever report). It then
// reconnects by itself, with exponential backoff and jitter, until closed.
//
// A LISTEN that succeeds proves nothing about delivery: PgBouncer in transaction mode, or any proxy
// that drops NotificationResponse, accepts LISTEN and answers the heartbeat, and never tells
// anything. So the listener holds only once a probe, NOTIFYed through another connection (the
// pool), has come back on its own; and every heartbeat probes again, so a path that stops
// delivering later is caught within a heartbeat and a probe timeout.
import { randomBytes } from 'node:crypto';
import type { ConfigErrorCode } from '../errors';
import type { PgClient } from './connect';
import { policyChannel } from './schema';

const POLICY_CHANNEL = policyChannel(null);

export type ListenerState = 'idle' | 'connecting' | 'listening' | 'lost' | 'closed';

/** What a notification says: these agents' policies changed, or anything may have ('*'). */
export type PolicyChange = { kind: 'agents'; agentIds: number[] } | { kind: 'all' };
/** A policy change, or a listener's probe ("probe:<nonce>"), which changes nothing. */
export type PolicyNotification = PolicyChange | { kind: 'probe'; nonce: string };

/** Sends one notification on POLICY_CHANNEL through a connection other than the listening one. */
export type SendNotification = (channel: string, payload: string) => Promise<unknown>;

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
  /** How long a probe, once sent, may take to come back before notifications count as undelivered. */
  probeTimeoutMs: number;
}

export const DEFAULT_LISTENER_OPTIONS: PolicyListenerOptions = {
  minBackoffMs: 100,
  maxBackoffMs: 10_000,
  heartbeatMs: 5_000,
  heartbeatTimeoutMs: 2_000,
  probeTimeoutMs: 3_000,
};

/** The listening connection LISTENs but is not told: the cache must not be trusted on it. */
export class NotificationsUndeliveredError extends Error {
  readonly code: ConfigErrorCode = 'ERR_TOOLGATE_NOTIFY_UNDELIVERED';
  constructor(timeoutMs: number, channel = POLICY_CHANNEL) {
    super(
      `A probe notification sent on ${channel} through the pool did not reach the listening connection within ${timeoutMs} ms, so runs read policies through the database. ` +
        "The likely cause is a connection pooler in transaction mode (PgBouncer) or a proxy that drops notifications: give toolgate a direct connection to PostgreSQL, or use policyCache 'strict'.",
    );
    this.name = 'NotificationsUndeliveredError';
  }
}

export class PolicyListener {
  #state: ListenerState = 'idle';
  #client: PgClient | undefined;
  #failures = 0;
  #retry: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  /** Bumped on every new connection, so late events from an old one are ignored. */
  #generation = 0;
  #backendPid: number | null = null;
  /** Probes sent and not yet back, by nonce. */
  readonly #probes = new Map<string, () => void>();
  /** The generation whose heartbeat is under way, so beats never pile up behind a slow one. */
  #beating: number | undefined;

  constructor(
    private readonly connect: () => PgClient,
    private readonly send: SendNotification,
    private readonly handlers: PolicyListenerHandlers,
    private readonly options: PolicyListenerOptions = DEFAULT_LISTENER_OPTIONS,
    /** toolgate_policy, or the channel of toolgate's own schema, which no other toolgate's triggers tell. */
    private readonly channel: string = POLICY_CHANNEL,
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
      if (!current() || message.channel !== this.channel) return;
      const told = parsePayload(message.payload);
      // Every instance's probes reach every instance: only this one's own are looked for.
      if (told.kind === 'probe') this.#probes.get(told.nonce)?.();
      else this.handlers.onChange(told);
    });
    try {
      await client.connect();
      // Nothing awaits this connection, so it must not hold the process: a host that stops its
      // server (or whose main ends) exits without close(), as it would without toolgate.
      client.unref();
      await client.query(`LISTEN ${this.channel}`);
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      this.#backendPid = rows[0]?.pid ?? null;
      await this.#probe();
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
    if (this.#beating === generation) return;
    this.#beating = generation;
    try {
      await deadline(
        client.query('SELECT 1'),
        this.options.heartbeatTimeoutMs,
        () => new Error('the listening connection did not answer its heartbeat'),
      );
      await this.#probe({ lostIfUnsent: false });
    } catch (err) {
      if (generation === this.#generation && this.#state === 'listening') this.#lose(err);
    } finally {
      if (this.#beating === generation) this.#beating = undefined;
    }
  }

  /**
   * NOTIFYs a nonce through the pool and waits for it here; rejects with NotificationsUndeliveredError
   * when it is sent and does not come back in time. A send that fails rejects on the way in (the
   * LISTEN is not trusted before one probe came back); on a heartbeat it is let go: the listening
   * connection has just answered and the last probe came back, and a pool too busy or too broken to
   * send one statement would only be loaded more by runs reading through.
   */
  async #probe({ lostIfUnsent = true } = {}): Promise<void> {
    const nonce = randomBytes(12).toString('hex');
    let back!: () => void;
    const arrived = new Promise<void>((resolve) => (back = resolve));
    // Registered before the send: the notification may come before the pool's answer does.
    this.#probes.set(nonce, back);
    try {
      try {
        await this.send(this.channel, `${PROBE_PREFIX}${nonce}`);
      } catch (err) {
        if (lostIfUnsent) throw err;
        return;
      }
      await deadline(
        arrived,
        this.options.probeTimeoutMs,
        () => new NotificationsUndeliveredError(this.options.probeTimeoutMs, this.channel),
      );
    } finally {
      this.#probes.delete(nonce);
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

/** Rejects with failure() if the work has not settled within ms; its timer never holds the process. */
async function deadline<T>(work: Promise<T>, ms: number, failure: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(failure()), ms);
    timer.unref();
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

const PROBE_PREFIX = 'probe:';
const PROBE = /^probe:([A-Za-z0-9_-]{1,64})$/;

/**
 * "12,57" → those agents; "probe:<nonce>" → a listener's probe; "*" or anything unreadable → all
 * (an unreadable payload must not be ignored).
 */
function parsePayload(payload: string | undefined): PolicyNotification {
  const probe = payload === undefined ? null : PROBE.exec(payload);
  if (probe) return { kind: 'probe', nonce: probe[1]! };
  if (payload === undefined || !/^\d{1,10}(?:,\d{1,10})*$/.test(payload)) return { kind: 'all' };
  return { kind: 'agents', agentIds: payload.split(',').map(Number) };
}
