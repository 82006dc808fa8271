// Whether an instance of toolgate is alive on this database, by its heartbeat (SEMANTICS §13): the
// schema's undo drops every table under the instances that serve from them, so it refuses while one
// has beaten within its own timeout, and names each so that an operator can find it and stop it.
import { QueryTypes, type Sequelize } from 'sequelize';
import { OPTION_DEFAULTS } from '../option-bounds';

export interface LiveInstance {
  id: string;
  /** The machine and process it runs in; null for an instance of a version that did not record them. */
  hostname: string | null;
  pid: number | null;
  /** Its last heartbeat, and how long ago that was. */
  heartbeat_at: Date;
  age_ms: number;
  /** How long its heartbeat may be silent before it is taken for dead. */
  stale_after_ms: number;
}

/**
 * The instances whose heartbeat is younger than their timeout and that did not say they stopped,
 * newest beat first; none when there is no toolgate_instances (nothing was migrated). An instance of
 * an earlier version recorded no timeout of its own: the default one (30 s) counts for it.
 */
export async function liveInstances(sequelize: Sequelize): Promise<LiveInstance[]> {
  const [table] = await sequelize.query<{ present: boolean }>(`SELECT to_regclass('toolgate_instances') IS NOT NULL AS present`, {
    type: QueryTypes.SELECT,
  });
  if (!table?.present) return [];
  // Read through to_jsonb, so that a table from before the instances recorded who they are reads too.
  const rows = await sequelize.query<LiveInstance & { age_ms: string | number }>(
    `SELECT i.id, j->>'hostname' AS hostname, (j->>'pid')::integer AS pid, i.heartbeat_at,
            round(extract(epoch FROM now() - i.heartbeat_at) * 1000) AS age_ms, s.stale_after_ms
       FROM toolgate_instances i
      CROSS JOIN LATERAL (SELECT to_jsonb(i) AS j) r
      CROSS JOIN LATERAL (SELECT coalesce((j->>'stale_after_ms')::integer, :stale) AS stale_after_ms) s
      WHERE i.stopped_at IS NULL AND i.heartbeat_at > now() - s.stale_after_ms * interval '1 millisecond'
      ORDER BY i.heartbeat_at DESC, i.id`,
    { replacements: { stale: OPTION_DEFAULTS.recovery.staleAfterMs }, type: QueryTypes.SELECT },
  );
  return rows.map((r) => ({ ...r, age_ms: Number(r.age_ms) }));
}

/** The undo of the schema was refused: these instances are alive on the database. Nothing was changed. */
export class InstancesAliveError extends Error {
  /** Stable, for a script that reads the command's output (docs/ERRORS.md, "Command refusals"). */
  readonly code = 'TOOLGATE_INSTANCES_ALIVE';
  constructor(readonly instances: readonly LiveInstance[]) {
    const named = instances.map(
      (i) =>
        `${i.id}${i.hostname === null ? '' : ` on ${i.hostname}`}${i.pid === null ? '' : ` (pid ${i.pid})`}, last heartbeat ${i.heartbeat_at.toISOString()} (${(i.age_ms / 1000).toFixed(1)} s ago; alive until it is ${i.stale_after_ms / 1000} s old)`,
    );
    super(
      `The schema was not undone, nothing was changed: ${instances.length === 1 ? 'an instance of toolgate is' : `${instances.length} instances of toolgate are`} alive on this database, and would serve from tables that are gone: ${named.join('; ')}. Stop ${instances.length === 1 ? 'it' : 'them'} first (SIGTERM to the service's own process), or wait until ${instances.length === 1 ? 'its heartbeat is' : 'their heartbeats are'} that old; --force undoes anyway, and ${instances.length === 1 ? 'it then answers' : 'they then answer'} 503 tables_missing.`,
    );
    this.name = 'InstancesAliveError';
  }
}
