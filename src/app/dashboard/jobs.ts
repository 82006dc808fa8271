// Operations that can outlast a request (the enabled_tools migration over a large table): started
// from a form, run in the background, their progress and outcome kept in admin_jobs, so the page
// that follows them works from any instance and after a reload.
import { QueryTypes, type Sequelize } from 'sequelize';
import { HttpError, NotFoundError } from '../../errors';
import type { MigrationProgress } from '../../legacy/migrate-enabled-tools';
import type { MigrationReport } from '../../legacy/report';

export type JobKind = 'dry_run' | 'apply' | 'undo';

export interface Job {
  id: number;
  kind: JobKind;
  map_typos: boolean;
  status: 'running' | 'succeeded' | 'failed';
  progress: MigrationProgress | null;
  report: MigrationReport | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
}

export type JobWork = (onProgress: (progress: MigrationProgress) => void) => Promise<MigrationReport>;

interface JobRow {
  id: number;
  kind: JobKind;
  options: { map_typos?: boolean };
  status: Job['status'];
  progress: MigrationProgress | null;
  result: MigrationReport | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
}

// Progress is written at most this often: a large table reports every batch.
const PROGRESS_EVERY_MS = 500;

export class JobStore {
  constructor(private readonly sequelize: Sequelize) {}

  /** Records the job and starts it; the returned id is the page that follows it. */
  async start(kind: JobKind, mapTypos: boolean, work: JobWork, onUnexpected: (err: unknown) => void): Promise<number> {
    const [row] = await this.sequelize.query<{ id: number }>(
      `INSERT INTO admin_jobs (kind, options, status) VALUES (:kind, :options, 'running') RETURNING id`,
      {
        replacements: { kind, options: JSON.stringify({ map_typos: mapTypos }) },
        type: QueryTypes.SELECT,
      },
    );
    const id = row!.id;
    let lastWrite = 0;
    const onProgress = (progress: MigrationProgress) => {
      const now = Date.now();
      if (now - lastWrite < PROGRESS_EVERY_MS && progress.done < progress.total) return;
      lastWrite = now;
      void this.update(id, { progress }).catch(onUnexpected);
    };
    // Two handlers, not then().catch(): a report that cannot be recorded must not be taken for the
    // work failing, whose message says nothing was committed while an apply may have committed.
    void work(onProgress)
      .then(
        (report) =>
          this.update(id, { status: 'succeeded', result: report }).catch((err: unknown) => {
            onUnexpected(err);
            return this.update(id, {
              status: 'failed',
              error: 'The job finished, but its report could not be recorded. The logs have the details.',
            });
          }),
        (err: unknown) => {
          const report = (err as { report?: MigrationReport }).report ?? null;
          const message =
            err instanceof HttpError ? err.message : 'The job failed on our side; nothing was committed. The logs have the details.';
          if (!(err instanceof HttpError)) onUnexpected(err);
          return this.update(id, { status: 'failed', error: message, result: report });
        },
      )
      .catch(onUnexpected);
    return id;
  }

  async get(id: number): Promise<Job> {
    const [row] = await this.sequelize.query<JobRow>('SELECT * FROM admin_jobs WHERE id = :id', {
      replacements: { id },
      type: QueryTypes.SELECT,
    });
    if (!row) throw new NotFoundError(`Job ${id}`);
    return toJob(row);
  }

  async recent(limit = 10): Promise<Job[]> {
    const rows = await this.sequelize.query<JobRow>('SELECT * FROM admin_jobs ORDER BY id DESC LIMIT :limit', {
      replacements: { limit },
      type: QueryTypes.SELECT,
    });
    return rows.map(toJob);
  }

  private async update(
    id: number,
    values: { status?: Job['status']; progress?: MigrationProgress; result?: MigrationReport | null; error?: string },
  ): Promise<void> {
    const sets = ['updated_at = now()'];
    if (values.status) sets.push('status = :status');
    if (values.progress) sets.push('progress = :progress');
    if (values.result !== undefined) sets.push('result = :result');
    if (values.error !== undefined) sets.push('error = :error');
    await this.sequelize.query(`UPDATE admin_jobs SET ${sets.join(', ')} WHERE id = :id`, {
      replacements: {
        id,
        status: values.status ?? null,
        progress: values.progress ? JSON.stringify(values.progress) : null,
        result: values.result ? JSON.stringify(values.result) : null,
        error: values.error ?? null,
      },
    });
  }
}

function toJob(row: JobRow): Job {
  return {
    id: row.id,
    kind: row.kind,
    map_typos: row.options?.map_typos === true,
    status: row.status,
    progress: row.progress,
    report: row.result,
    error: row.error,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
