// The CLIs' progress bar for large agent tables: drawn only on a terminal, and cleared when done so
// that the report (or the JSON) that follows stands alone.
import cliProgress from 'cli-progress';
import type { MigrationProgress } from './migrate-enabled-tools';

// Below this many agents a run takes well under a second: a bar would only flicker.
export const PROGRESS_BAR_MIN_AGENTS = 5000;

const PHASES: Record<MigrationProgress['phase'], string> = { plan: 'planning ', verify: 'verifying' };

export interface ProgressBar {
  update(progress: MigrationProgress): void;
  stop(): void;
}

export function progressBar(stream: NodeJS.WriteStream = process.stdout): ProgressBar {
  if (!stream.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new cliProgress.SingleBar(
    {
      stream,
      clearOnComplete: true,
      hideCursor: true,
      format: '{phase} [{bar}] {percentage}% | {value}/{total} agents | {duration_formatted}',
    },
    cliProgress.Presets.shades_classic,
  );
  let phase: MigrationProgress['phase'] | null = null;
  return {
    update(progress) {
      if (progress.total < PROGRESS_BAR_MIN_AGENTS) return;
      if (phase !== progress.phase) {
        if (phase !== null) bar.stop();
        phase = progress.phase;
        bar.start(progress.total, progress.done, { phase: PHASES[progress.phase] });
        return;
      }
      bar.setTotal(progress.total);
      bar.update(progress.done, { phase: PHASES[progress.phase] });
    },
    stop() {
      if (phase !== null) bar.stop();
      phase = null;
    },
  };
}
