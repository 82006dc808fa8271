// Puts a vector beside every chunk: the chunks of a new document, and every chunk whose vector is
// missing or of another space (the model or the dimensions changed). The same loop is the
// re-embedding job: it claims a batch of chunks (FOR UPDATE SKIP LOCKED), embeds it and writes it
// in one transaction, so several instances share the work, and a killed one leaves its batch
// unclaimed and nothing half-written: running it again resumes where the table says.
import { QueryTypes, type Sequelize } from 'sequelize';
import { unitVector, type Embeddings, type EmbeddingSpace } from '../llm/embeddings';

export interface EmbeddingProgress {
  model: string;
  /** Null until the provider has answered once, when the dimensions are not configured. */
  dimensions: number | null;
  /** All chunks, of every agent. */
  total: number;
  /** Chunks with a vector of this model and dimensions. */
  embedded: number;
  /** Chunks still to embed (none yet, or of another space). */
  pending: number;
}

export interface EmbedPendingOptions {
  /** Only this document's chunks (an upload), else every pending chunk. */
  documentId?: number | string;
  /** Called after each batch is committed. */
  onBatch?: (embeddedSoFar: number) => void;
  /** Stops between batches when aborted. */
  signal?: AbortSignal;
}

/** Chunks per claimed batch: one embeddings request, one transaction. */
export const EMBED_BATCH = 64;

export class ChunkEmbedder {
  constructor(
    private readonly sequelize: Sequelize,
    readonly embeddings: Embeddings,
    private readonly batch = EMBED_BATCH,
  ) {}

  /** The space vectors are compared in; undefined while the dimensions are not known yet. */
  space(): EmbeddingSpace | undefined {
    const dimensions = this.embeddings.dimensions;
    return dimensions === undefined ? undefined : { model: this.embeddings.model, dimensions };
  }

  /** Embeds pending chunks until none is left (or the signal stops it); returns how many it wrote. */
  async embedPending(options: EmbedPendingOptions = {}): Promise<number> {
    let written = 0;
    while (!options.signal?.aborted) {
      const count = await this.embedOneBatch(options.documentId);
      if (count === 0) break;
      written += count;
      options.onBatch?.(written);
    }
    return written;
  }

  private embedOneBatch(documentId: number | string | undefined): Promise<number> {
    return this.sequelize.transaction(async (transaction) => {
      const model = this.embeddings.model;
      const rows = await this.sequelize.query<{ id: string; content: string }>(
        `SELECT id::text AS id, content FROM document_chunks
          WHERE (embedding_model IS DISTINCT FROM $1 OR ($2::int IS NOT NULL AND embedding_dimensions IS DISTINCT FROM $2::int))
            AND ($3::bigint IS NULL OR document_id = $3::bigint)
          ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED`,
        { bind: [model, this.embeddings.dimensions ?? null, documentId ?? null, this.batch], type: QueryTypes.SELECT, transaction },
      );
      if (rows.length === 0) return 0;
      const vectors = await this.embeddings.embed(rows.map((r) => r.content));
      const dimensions = vectors[0]!.length;
      await this.sequelize.query(
        `UPDATE document_chunks c SET embedding = v.embedding::real[], embedding_model = $3, embedding_dimensions = $4
           FROM unnest($1::bigint[], $2::text[]) AS v(id, embedding) WHERE c.id = v.id`,
        {
          bind: [rows.map((r) => r.id), vectors.map((v) => `{${unitVector(v).join(',')}}`), model, dimensions],
          transaction,
        },
      );
      return rows.length;
    });
  }

  /** How far the table is from every chunk holding a vector of the current space. */
  async progress(): Promise<EmbeddingProgress> {
    const space = this.space();
    const [row] = await this.sequelize.query<{ total: string; embedded: string }>(
      `SELECT count(*) AS total,
              count(*) FILTER (WHERE embedding_model = $1 AND ($2::int IS NULL OR embedding_dimensions = $2::int)) AS embedded
         FROM document_chunks`,
      { bind: [this.embeddings.model, space?.dimensions ?? null], type: QueryTypes.SELECT },
    );
    const total = Number(row!.total);
    const embedded = Number(row!.embedded);
    return { model: this.embeddings.model, dimensions: space?.dimensions ?? null, total, embedded, pending: total - embedded };
  }
}
