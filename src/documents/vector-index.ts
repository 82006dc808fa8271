// Where the pgvector extension is installed on the server, semantic search uses it: its cosine
// operator in place of toolgate_dot, and an HNSW index over the vectors of the configured model
// and dimensions, which answers a nearest-chunks query without reading every vector. The extension
// is optional: without it (the embedded server has none) the exact SQL search answers the same
// queries, by reading the agent's vectors.
import { createHash } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import type { EmbeddingSpace } from '../llm/embeddings';
import { HNSW_MAX_DIMENSIONS, type VectorEngine } from './vector-search';

export interface VectorIndexState {
  engine: VectorEngine;
  /** The HNSW index's name, when one serves the configured space. */
  index: string | null;
  /** Why pgvector is not used, when it is not. */
  reason?: string;
}

export class VectorIndex {
  private state: VectorIndexState = { engine: 'exact', index: null, reason: 'not prepared yet (tg.migrate() prepares it)' };

  constructor(private readonly sequelize: Sequelize) {}

  /** The engine searches use now. */
  readonly engine = (): VectorEngine => this.state.engine;

  current(): VectorIndexState {
    return this.state;
  }

  /**
   * Uses pgvector when the server has it: creates the extension when it is available but not
   * created (which needs the right to), then the HNSW index for `space`. Anything short of that
   * leaves the exact search in place and says why; it never fails the caller.
   */
  async prepare(space: EmbeddingSpace | undefined): Promise<VectorIndexState> {
    this.state = await this.tryPgvector(space);
    return this.state;
  }

  private async tryPgvector(space: EmbeddingSpace | undefined): Promise<VectorIndexState> {
    const available = await this.scalar<string>(`SELECT default_version FROM pg_available_extensions WHERE name = 'vector'`);
    if (!available) return { engine: 'exact', index: null, reason: 'the server has no pgvector extension' };
    try {
      await this.sequelize.query('CREATE EXTENSION IF NOT EXISTS vector');
    } catch (err) {
      return { engine: 'exact', index: null, reason: `pgvector could not be created here (${(err as Error).message})` };
    }
    if (!space) return { engine: 'pgvector', index: null, reason: 'the dimensions are not known until the provider first answers' };
    if (space.dimensions > HNSW_MAX_DIMENSIONS)
      return { engine: 'pgvector', index: null, reason: `pgvector's HNSW index takes at most ${HNSW_MAX_DIMENSIONS} dimensions` };
    const index = hnswIndexName(space);
    const model = this.sequelize.escape(space.model);
    const dims = space.dimensions;
    try {
      await this.sequelize.query(
        `CREATE INDEX IF NOT EXISTS ${index} ON document_chunks USING hnsw ((embedding::vector(${dims})) vector_cosine_ops)
          WHERE embedding_model = ${model} AND embedding_dimensions = ${dims}`,
      );
    } catch (err) {
      // Another instance building the same index at the same moment: theirs serves.
      if (!(await this.scalar<string>(`SELECT to_regclass('${index}')::text`))) throw err;
    }
    return { engine: 'pgvector', index };
  }

  private async scalar<T>(sql: string): Promise<T | undefined> {
    const [rows] = (await this.sequelize.query(sql)) as [Record<string, T>[], unknown];
    const row = rows[0];
    return row ? Object.values(row)[0] : undefined;
  }
}

/** One index per space; the model's name is hashed, as it may hold any character. */
function hnswIndexName(space: EmbeddingSpace): string {
  const hash = createHash('sha256').update(space.model).digest('hex').slice(0, 12);
  return `document_chunks_toolgate_hnsw_${space.dimensions}_${hash}`;
}
