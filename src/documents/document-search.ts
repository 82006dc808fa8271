// What a document search is, whatever lists answer it: the chunks of one agent's documents that
// best answer a query, best first, each saying which lists found it, and the search saying which
// lists it could use. Two lists exist: the lexical one (PostgreSQL full text, full-text-search.ts)
// and the semantic one (embeddings, vector-search.ts); hybrid-search.ts fuses them.
import { z } from 'zod';

/** The lists a chunk can be found by: its words, or its meaning. */
const foundBySchema = z.enum(['lexical', 'semantic']);
export type FoundBy = z.output<typeof foundBySchema>;

/** A hit as HTTP.md returns it: every field of the chunk found but its text. */
export const searchResultSchema = z.object({
  chunk_id: z.number().int().describe("the chunk's id: what an answer's sources cite"),
  document_id: z.number().int(),
  title: z.string(),
  chunk_index: z.number().int(),
  /** A short plain-text excerpt: around the matched words, or the chunk's start. */
  snippet: z.string(),
  score: z.number().describe('higher is better; comparable within one list only'),
  /** Lexical first. */
  found_by: z.array(foundBySchema).describe('the lists that found the chunk: its words, its meaning'),
});
export type SearchResult = z.output<typeof searchResultSchema>;

/** One chunk found: the HTTP result fields, plus the chunk's text for answering from it. */
export interface SearchHit extends SearchResult {
  /** The whole chunk, verbatim from the document (never sent in a search response). */
  content: string;
}

/**
 * Which lists a search used, and, when not all it could, a sentence saying why:
 * - `used`: the query was embedded and compared with the chunks' vectors;
 * - `off`: no embedding provider is configured (the offline default): words only;
 * - `unavailable`: the provider failed; the results are the lexical list alone.
 */
export const retrievalSchema = z
  .object({
    semantic: z.enum(['used', 'off', 'unavailable']),
    note: z.string().optional(),
  })
  .describe('whether semantic search took part: off without an embedding provider, unavailable when it failed');
export type Retrieval = z.output<typeof retrievalSchema>;
export type SemanticStatus = Retrieval['semantic'];

/** What the search route answers. */
export const searchAnswerViewSchema = z.object({
  routing_key: z.string().nullable(),
  results: z.array(searchResultSchema),
  retrieval: retrievalSchema,
});

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
