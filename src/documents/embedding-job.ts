// The re-embedding job on this instance: at most one run at a time, started by an operator (POST
// /embeddings/reindex), by the service's periodic sweep, or by the host. Its progress is the
// table's (ChunkEmbedder.progress()), so every instance shows the same figures, and a run that
// dies leaves nothing to clean up: the next one resumes.
import type { ChunkEmbedder, EmbeddingProgress } from './chunk-embedder';

export interface EmbeddingJobView {
  /** Whether a run is going on this instance now. */
  running: boolean;
  /** How the last run on this instance ended, when one has. */
  last: { finished_at: string; embedded: number; error: string | null } | null;
}

export class EmbeddingJob {
  private run: Promise<void> | null = null;
  private abort: AbortController | null = null;
  private last: EmbeddingJobView['last'] = null;

  constructor(
    private readonly embedder: ChunkEmbedder,
    private readonly onFailure: (err: unknown) => void,
  ) {}

  /** Starts a run unless one is going; resolves when it has started, not when it ends. */
  start(): EmbeddingJobView {
    if (!this.run) {
      const abort = new AbortController();
      this.abort = abort;
      let embedded = 0;
      this.run = this.embedder.embedPending({ signal: abort.signal, onBatch: (n) => (embedded = n) }).then(
        () => this.finish(embedded, null),
        (err: unknown) => {
          this.onFailure(err);
          this.finish(embedded, err instanceof Error ? err.message : String(err));
        },
      );
    }
    return this.view();
  }

  view(): EmbeddingJobView {
    return { running: this.run !== null, last: this.last };
  }

  progress(): Promise<EmbeddingProgress> {
    return this.embedder.progress();
  }

  /** Stops the run between two batches and waits for it: the batch in flight is committed or not at all. */
  async stop(): Promise<void> {
    this.abort?.abort();
    await this.run;
  }

  private finish(embedded: number, error: string | null): void {
    this.last = { finished_at: new Date().toISOString(), embedded, error };
    this.run = null;
    this.abort = null;
  }
}
