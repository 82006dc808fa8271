// What a document search is, whatever index answers it: the chunks of one agent's documents that
// best answer a query, best first.
//
// The PostgreSQL full-text implementation (full-text-search.ts) needs no extension. A vector index
// plugs in behind this same interface, passed as DocumentStoreOptions.search: with pgvector and an
// embedding provider, a migration adds `document_chunks.embedding vector(<dimensions>)` and an HNSW
// index; DocumentStore.add(), the one place chunks are written, embeds them in the upload's
// transaction; and a PgVectorSearch answers search() with `ORDER BY embedding <=> :query_embedding
// LIMIT :top_k` under the same agent scope. A hybrid can fuse both rankings (reciprocal rank
// fusion) and still return SearchHit[]; the routes and ask never change.

/** One chunk found: the HTTP result fields, plus the chunk's text for answering from it. */
export interface SearchHit {
  document_id: number;
  title: string;
  chunk_index: number;
  /** A short plain-text excerpt around the matched words. */
  snippet: string;
  /** Higher is better; comparable within one result list only. */
  score: number;
  /** The whole chunk, verbatim from the document (never sent in a search response). */
  content: string;
}

/** A hit as HTTP.md returns it: `{document_id, title, chunk_index, snippet, score}`. */
export type SearchResult = Omit<SearchHit, 'content'>;

export interface DocumentSearch {
  /**
   * At most topK chunks of agentId's documents, best first, ties in (document_id, chunk_index)
   * order. A query with no searchable word (stop words, punctuation) finds nothing: [] not an error.
   */
  search(agentId: number, query: string, topK: number): Promise<SearchHit[]>;
}

/** The most results one search returns, whatever top_k asks for. */
export const MAX_TOP_K = 50;

export function searchResult(hit: SearchHit): SearchResult {
  return { document_id: hit.document_id, title: hit.title, chunk_index: hit.chunk_index, snippet: hit.snippet, score: hit.score };
}
