// The sweeper (SEMANTICS §13): closes what a dead instance left open, so nothing stays `started` or
// running forever, and nothing is ever run again.
// - A `started` tool-call record whose instance is dead, past its deadline (the tool's timeout plus
//   a grace period), becomes `interrupted`: its outcome is unknown, and it never runs again. So does
//   one of this instance's own that it no longer runs (its end could not be written).
// - An agent run left open by a dead instance (or by this one, no longer running it) ends
//   `interrupted`.
// - Idempotency keys past their time are deleted, and so are cap counters every call of which has
//   left the window (a sender who never calls again leaves nothing behind), and instances not heard
//   from for a day (a row each process start; anything naming a missing instance reads as dead).
// - The record tables' partitions (src/db/partitions.ts): the ones ahead made, and with a retention
//   the old ones dropped whole; at the first sweep and then hourly, apart from the rest (a failure
//   there is told, and the rest of the sweep stands). The decision log follows the same retention:
//   its entries older than it go, oldest first (src/services/decision-log.ts, trimDecisionLog).
// Every instance sweeps: each statement's conditions make a second sweep of the same rows a no-op.
import { QueryTypes, type Sequelize } from 'sequelize';
import { aliveSql, type Instances } from '../db/instances';
import { dropExpiredPartitions, makePartitionsAhead, type RetentionResult } from '../db/partitions';
import { RETENTION_DEFAULTS, type RetentionSettings } from '../retention-options';
import { sweepCaps } from '../services/cap-usage';
import { trimDecisionLog } from '../services/decision-log';

export interface SweepResult {
  records: number;
  runs: number;
  keys: number;
  caps: number;
  instances: number;
  /** Partitions made ahead, and dropped by the retention (both 0 in a sweep that left them be). */
  partitionsMade: number;
  partitionsDropped: number;
}

export interface PartitionResult extends RetentionResult {
  made: number;
  /** Decision-log entries the retention removed. */
  logEntriesRemoved: number;
}

export interface SweeperOptions {
  intervalMs: number;
  /** How long after its start an open run of a dead instance is left before it is closed. */
  graceMs: number;
  /** What this instance runs now: its own open records and runs are left be. */
  inFlight: { records(): readonly number[]; runs(): readonly number[] };
  /** How long records are kept, and how long a partition spans. Default: every record kept, monthly. */
  retention?: RetentionSettings;
  /** How often the partitions are seen to (default hourly). */
  partitionEveryMs?: number;
  onSwept?(result: SweepResult): void;
  /** A partition old enough to go that is kept, for what it holds. */
  onKept?(kept: RetentionResult['kept']): void;
  onError?(err: unknown): void;
}

const PARTITION_EVERY_MS = 3_600_000;

const RECORDS = `
  UPDATE tool_calls SET status = 'interrupted',
         error = 'interrupted: the instance running it stopped before it ended; its outcome is unknown, and it is not run again'
   WHERE status = 'started' AND deadline_at < now()
     AND (NOT ${aliveSql('tool_calls.instance_id')} OR (instance_id = :me AND NOT (id = ANY (ARRAY[:mine]::bigint[]))))
  RETURNING id`;

const RUNS = `
  UPDATE agent_runs SET stopped = 'interrupted', completed_at = now(),
         error = 'interrupted: the instance running it stopped before it ended; its tool calls are in the records, and nothing is run again'
   WHERE completed_at IS NULL AND created_at < now() - :grace * interval '1 millisecond'
     AND (instance_id IS NULL OR NOT ${aliveSql('agent_runs.instance_id')} OR (instance_id = :me AND NOT (id = ANY (ARRAY[:mine]::integer[]))))
  RETURNING id`;

const INSTANCES = `DELETE FROM toolgate_instances WHERE heartbeat_at < now() - interval '1 day' RETURNING id`;

const KEYS = `DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at < now() LIMIT 10000) RETURNING key`;

export class Sweeper {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<SweepResult> | undefined;
  #partitionsAt = -Infinity;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly instances: Instances,
    private readonly options: SweeperOptions,
  ) {}

  /** Sweeps every `intervalMs`, never keeping a process alive. */
  start(): void {
    this.#timer ??= setInterval(() => {
      this.sweep().catch((err: unknown) => this.options.onError?.(err));
    }, this.options.intervalMs).unref();
  }

  /** One sweep; a sweep under way is awaited rather than doubled. */
  sweep(): Promise<SweepResult> {
    return (this.#running ??= this.#sweep().finally(() => {
      this.#running = undefined;
    }));
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #sweep(): Promise<SweepResult> {
    const stale = this.instances.timings.staleAfterMs;
    const me = this.instances.id;
    // -1 stands for "none": an empty array would not bind.
    const records = await this.sequelize.query(RECORDS, {
      replacements: { stale, me, mine: [-1, ...this.options.inFlight.records()] },
      type: QueryTypes.SELECT,
    });
    const runs = await this.sequelize.query(RUNS, {
      replacements: { stale, me, grace: this.options.graceMs, mine: [-1, ...this.options.inFlight.runs()] },
      type: QueryTypes.SELECT,
    });
    const keys = await this.sequelize.query(KEYS, { type: QueryTypes.SELECT });
    const caps = await sweepCaps(this.sequelize);
    // After the records and runs above: those of an instance dead for a day were closed long since.
    const instances = await this.sequelize.query(INSTANCES, { type: QueryTypes.SELECT });
    const partitions = await this.#partitionsIfDue();
    const result = {
      records: records.length,
      runs: runs.length,
      keys: keys.length,
      caps,
      instances: instances.length,
      partitionsMade: partitions.made,
      partitionsDropped: partitions.dropped.length,
    };
    if (Object.values(result).some((n) => n > 0)) this.options.onSwept?.(result);
    return result;
  }

  async #partitionsIfDue(): Promise<PartitionResult> {
    if (Date.now() - this.#partitionsAt < (this.options.partitionEveryMs ?? PARTITION_EVERY_MS))
      return { made: 0, dropped: [], kept: [], logEntriesRemoved: 0 };
    this.#partitionsAt = Date.now();
    try {
      return await this.partitions();
    } catch (err) {
      this.options.onError?.(err);
      return { made: 0, dropped: [], kept: [], logEntriesRemoved: 0 };
    }
  }

  /** Makes the partitions ahead, then drops what the retention lets go. */
  async partitions(): Promise<PartitionResult> {
    const retention = this.options.retention ?? RETENTION_DEFAULTS;
    const made = await makePartitionsAhead(this.sequelize, retention.partitions);
    const { dropped, kept } = await dropExpiredPartitions(this.sequelize, retention.keepDays);
    if (kept.length > 0) this.options.onKept?.(kept);
    const logEntriesRemoved = retention.keepDays === null ? 0 : await trimDecisionLog(this.sequelize, retention.keepDays);
    return { made, dropped, kept, logEntriesRemoved };
  }
}
