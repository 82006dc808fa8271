// The semantic list: an agent's chunks nearest a query's vector, by cosine, among the chunks
// embedded in the same space (model and dimensions). Exact on any PostgreSQL (toolgate_dot over
// real[], which the embedded server runs as is); where the pgvector extension is installed, the
// same ranking by pgvector's <=> operator, which its HNSW index (vector-index.ts) can answer.
import { QueryTypes, type Sequelize } from 'sequelize';
import type { EmbeddingSpace } from '../llm/embeddings';
import { hitOf, MAX_TOP_K, type ChunkRow, type SearchHit } from './document-search';

/** Above this many dimensions pgvector's HNSW index does not apply (its vector type's index limit). */
export const HNSW_MAX_DIMENSIONS = 2000;
/** How many words a semantic hit's snippet shows: its chunk's start, as no word of it matched. */
const SNIPPET_WORDS = 35;

/** How the distance is computed: toolgate's SQL function, or pgvector's operator. */
export type VectorEngine = 'exact' | 'pgvector';

export class VectorSearch {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly engine: () => VectorEngine = () => 'exact',
  ) {}

  /** At most topK chunks, best first; `vector` is of unit length (a dot product is its cosine). */
  async nearest(agentId: number, vector: readonly number[], space: EmbeddingSpace, topK: number): Promise<SearchHit[]> {
    const limit = Math.min(topK, MAX_TOP_K);
    const rows =
      this.engine() === 'pgvector' && space.dimensions <= HNSW_MAX_DIMENSIONS
        ? await this.byPgvector(agentId, vector, space, limit)
        : await this.sequelize.query<ChunkRow>(
            this.sql('toolgate_dot(c.embedding, $1::real[])', 'score DESC, c.document_id, c.chunk_index'),
            {
              bind: [[...vector], agentId, space.model, space.dimensions, limit],
              type: QueryTypes.SELECT,
            },
          );
    return rows.map((r) => hitOf(r, snippetOf(r.content), 'semantic'));
  }

  /**
   * The same ranking by pgvector, in a transaction of its own so that its index settings stay
   * local: an HNSW scan filtered to one agent keeps scanning until it has topK rows (strict order).
   * Ordered by the distance alone: an index orders a query only when it yields every sort key, so a
   * tie-break there would keep the HNSW index out of every plan (the outer query breaks ties).
   */
  private byPgvector(agentId: number, vector: readonly number[], space: EmbeddingSpace, limit: number): Promise<ChunkRow[]> {
    const dims = space.dimensions;
    const distance = `(c.embedding::vector(${dims}) <=> $1::real[]::vector(${dims}))`;
    return this.sequelize.transaction(async (transaction) => {
      await this.sequelize.query(`SET LOCAL hnsw.iterative_scan = strict_order; SET LOCAL hnsw.ef_search = ${Math.max(40, limit * 2)}`, {
        transaction,
      });
      return this.sequelize.query<ChunkRow>(this.sql(`1 - ${distance}`, `${distance}`, this.sequelize.escape(space.model)), {
        bind: [[...vector], agentId, space.model, dims, limit],
        type: QueryTypes.SELECT,
        transaction,
      });
    });
  }

  /**
   * The nearest chunks, then their titles. `modelLiteral`, when given, repeats the model as a
   * constant so that the planner can match a partial index built for that model.
   */
  private sql(score: string, order: string, modelLiteral?: string): string {
    const model = modelLiteral ? `c.embedding_model = ${modelLiteral} AND ` : '';
    return `
      WITH near AS (
        SELECT c.id, c.document_id, c.chunk_index, c.content, ${score} AS score
          FROM document_chunks c
         WHERE c.agent_id = $2 AND ${model}c.embedding_model = $3 AND c.embedding_dimensions = $4
         ORDER BY ${order}
         LIMIT $5
      )
      SELECT n.id, n.document_id, coalesce(d.title, '') AS title, n.chunk_index, n.content, n.score
        FROM near n JOIN documents d ON d.id = n.document_id
       ORDER BY n.score DESC, n.document_id, n.chunk_index`;
  }
}

/** The chunk's first words, on one line. */
function snippetOf(content: string): string {
  return content.trim().split(/\s+/).slice(0, SNIPPET_WORDS).join(' ');
}
