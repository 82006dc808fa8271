// What a document search is, whatever lists answer it: the chunks of one agent's documents that
// best answer a query, best first, each saying which lists found it, and the search saying which
// lists it could use. Two lists exist: the lexical one (PostgreSQL full text, full-text-search.ts)
// and the semantic one (embeddings, vector-search.ts); hybrid-search.ts fuses them.

/** The lists a chunk can be found by: its words, or its meaning. */
export type FoundBy = 'lexical' | 'semantic';

/** One chunk found: the HTTP result fields, plus the chunk's text for answering from it. */
export interface SearchHit {
  /** The chunk's own id: what an answer's sources cite. */
  chunk_id: number;
  document_id: number;
  title: string;
  chunk_index: number;
  /** A short plain-text excerpt: around the matched words, or the chunk's start. */
  snippet: string;
  /** Higher is better; comparable within one result list only. */
  score: number;
  /** The lists that found it, lexical first. */
  found_by: FoundBy[];
  /** The whole chunk, verbatim from the document (never sent in a search response). */
  content: string;
}

/** A hit as HTTP.md returns it. */
export type SearchResult = Omit<SearchHit, 'content'>;

/**
 * - `used`: the query was embedded and compared with the chunks' vectors;
 * - `off`: no embedding provider is configured (the offline default): words only;
 * - `unavailable`: the provider failed; the results are the lexical list alone.
 */
export type SemanticStatus = 'used' | 'off' | 'unavailable';

/** Which lists a search used, and, when not all it could, a sentence saying why. */
export interface Retrieval {
  semantic: SemanticStatus;
  note?: string;
}

export interface SearchAnswer {
  hits: SearchHit[];
  retrieval: Retrieval;
}

export interface DocumentSearch {
  /**
   * At most topK chunks of agentId's documents, best first, ties in (document_id, chunk_index)
   * order. A query with no searchable word finds nothing by its words: [] from the lexical list.
   */
  search(agentId: number, query: string, topK: number): Promise<SearchAnswer>;
}

/** One ranked list: the chunks one method finds, best first. */
export interface RankedList {
  search(agentId: number, query: string, topK: number): Promise<SearchHit[]>;
}

/** The most results one search returns, whatever top_k asks for. */
export const MAX_TOP_K = 50;

export function searchResult(hit: SearchHit): SearchResult {
  const { content: _content, ...result } = hit;
  return result;
}

/** A chunk as the lists' SQL reads it: ids may come back as strings (bigint), scores too (numeric). */
export interface ChunkRow {
  id: number | string;
  document_id: number | string;
  title: string;
  chunk_index: number;
  content: string;
  score: number | string;
}

/** The hit of one list: the score kept to six decimals, so equal scores compare equal. */
export function hitOf(row: ChunkRow, snippet: string, by: FoundBy): SearchHit {
  return {
    chunk_id: Number(row.id),
    document_id: Number(row.document_id),
    title: row.title,
    chunk_index: row.chunk_index,
    snippet,
    score: Math.round(Number(row.score) * 1e6) / 1e6,
    found_by: [by],
    content: row.content,
  };
}
