// This instance's heartbeat, and whether another's still beats (SEMANTICS §13). A record, a run or
// an idempotency key names the instance that holds it; when that instance's heartbeat has stopped
// (it was killed, or shut down), what it held is closed by the sweeper or answered to a retry, and
// never run again. An instance registers itself before it first writes anything it holds.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Sequelize } from 'sequelize';

export interface InstanceTimings {
  /** How often the heartbeat is written. */
  heartbeatMs: number;
  /** A heartbeat older than this is a dead instance's. */
  staleAfterMs: number;
}

export class Instances {
  /** This instance's name: random, so a restarted process is a new instance. */
  readonly id = `inst_${randomBytes(8).toString('hex')}`;
  #registered: Promise<void> | null = null;
  #timer: NodeJS.Timeout | undefined;
  readonly #onRegistered: (() => void)[] = [];

  constructor(
    private readonly sequelize: Sequelize,
    readonly timings: InstanceTimings,
  ) {}

  /** Registers this instance, once, and starts its heartbeat (which never keeps a process alive). */
  register(): Promise<void> {
    return (this.#registered ??= this.#beat().then(
      () => {
        this.#timer ??= setInterval(() => void this.#beat().catch(() => undefined), this.timings.heartbeatMs).unref();
        for (const told of this.#onRegistered) told();
      },
      (err: unknown) => {
        this.#registered = null;
        throw err;
      },
    ));
  }

  /** Told each time this instance registers (what runs beside a registered instance starts then). */
  onRegistered(told: () => void): void {
    this.#onRegistered.push(told);
  }

  /** Stops the heartbeat and says this instance is gone, so what it left is closed without waiting. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#registered === null) return;
    this.#registered = null;
    await this.sequelize.query('UPDATE toolgate_instances SET stopped_at = now() WHERE id = :id', { replacements: { id: this.id } });
  }

  async #beat(): Promise<void> {
    // Where it runs and how long it may be silent, so that the schema's undo can tell it is alive and name it.
    await this.sequelize.query(
      `INSERT INTO toolgate_instances (id, hostname, pid, stale_after_ms) VALUES (:id, :hostname, :pid, :stale)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = now() WHERE toolgate_instances.stopped_at IS NULL`,
      { replacements: { id: this.id, hostname: hostname().slice(0, 255), pid: process.pid, stale: this.timings.staleAfterMs } },
    );
  }
}

/**
 * SQL that is true when the instance named by the expression `id` is alive; it reads the
 * timings' staleAfterMs from `stale`: the replacement `:stale` unless told another (a parameter).
 */
export function aliveSql(id: string, stale = ':stale'): string {
  return `EXISTS (SELECT 1 FROM toolgate_instances i WHERE i.id = ${id} AND i.stopped_at IS NULL AND i.heartbeat_at > now() - ${stale} * interval '1 millisecond')`;
}
