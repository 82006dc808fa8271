// The search behind search, ask and the document_search tool: the lexical list alone while no
// embedding provider is configured (the offline default), else the lexical and the semantic lists
// fused by reciprocal rank. A provider that fails costs the semantic list only: the lexical results
// come back, marked, never an error.
import { DatabaseError, QueryTypes, type Sequelize } from 'sequelize';
import { unitVector, type Embeddings } from '../llm/embeddings';
import { isModelError } from '../llm/language-model';
import { MAX_TOP_K, type DocumentSearch, type RankedList, type SearchAnswer } from './document-search';
import { fuseRankings } from './rank-fusion';
import type { VectorSearch } from './vector-search';

export interface HybridSearchOptions {
  lexical: RankedList;
  /** Both, or neither: the provider that embeds the query, and the search over the chunks' vectors. */
  semantic?: { embeddings: Embeddings; vectors: VectorSearch };
  /** Told of a provider failure (the search itself goes on without it). */
  onSemanticFailure?: (err: unknown) => void;
}

export class HybridSearch implements DocumentSearch {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly options: HybridSearchOptions,
  ) {}

  async search(agentId: number, query: string, topK: number): Promise<SearchAnswer> {
    if (!Number.isInteger(topK) || topK < 1) throw new RangeError(`search() needs a positive integer topK (got ${topK}).`);
    const semantic = this.options.semantic;
    if (!semantic) return { hits: await this.options.lexical.search(agentId, query, topK), retrieval: { semantic: 'off' } };
    // Each list is read to its full depth: a chunk ranked low by one list may be first by both.
    const [lexical, near] = await Promise.all([this.options.lexical.search(agentId, query, MAX_TOP_K), this.nearest(agentId, query)]);
    if ('failed' in near) {
      return {
        hits: lexical.slice(0, topK),
        retrieval: {
          semantic: 'unavailable',
          note: `Semantic search was unavailable (${near.failed}); these results match the query's words only.`,
        },
      };
    }
    const hits = fuseRankings(
      [
        { by: 'lexical', hits: lexical },
        { by: 'semantic', hits: near.hits },
      ],
      topK,
    );
    const unembedded = await this.unembeddedCount(agentId, near.model, near.dimensions);
    return {
      hits,
      retrieval:
        unembedded === 0
          ? { semantic: 'used' }
          : {
              semantic: 'used',
              note: `${unembedded} of this agent's chunks are not embedded with ${near.model} yet; they were found by their words only.`,
            },
    };
  }

  private async nearest(agentId: number, query: string) {
    const { embeddings, vectors } = this.options.semantic!;
    try {
      const [vector] = await embeddings.embed([query]);
      const space = { model: embeddings.model, dimensions: vector!.length };
      return { ...space, hits: await vectors.nearest(agentId, unitVector(vector!), space, MAX_TOP_K) };
    } catch (err) {
      if (isStatementTimeout(err)) {
        this.options.onSemanticFailure?.(err);
        return { failed: 'comparing every vector of this agent took longer than the database allows; pgvector makes it fast' };
      }
      if (!isModelError(err)) throw err;
      this.options.onSemanticFailure?.(err);
      // The sentence goes inside another one: no capital, no full stop.
      const reason = err.message.replace(/\.$/, '');
      return { failed: reason.charAt(0).toLowerCase() + reason.slice(1) };
    }
  }

  private async unembeddedCount(agentId: number, model: string, dimensions: number): Promise<number> {
    const [row] = await this.sequelize.query<{ n: string }>(
      `SELECT count(*) AS n FROM document_chunks
        WHERE agent_id = $1 AND (embedding_model IS DISTINCT FROM $2 OR embedding_dimensions IS DISTINCT FROM $3::int)`,
      { bind: [agentId, model, dimensions], type: QueryTypes.SELECT },
    );
    return Number(row!.n);
  }
}

/**
 * The semantic list's query cancelled by statement_timeout (SQLSTATE 57014): an agent with more
 * vectors than exact search reads in time. It costs the semantic list, as a failing provider does;
 * any other database error is the request's (a 503 when the database is gone).
 */
function isStatementTimeout(err: unknown): boolean {
  const cause = err instanceof DatabaseError ? err.parent : undefined;
  return (cause as { code?: unknown } | undefined)?.code === '57014';
}
