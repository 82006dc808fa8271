// The lexical list: PostgreSQL full text (the chunks' generated tsvector, its GIN index,
// websearch_to_tsquery) ranked by Okapi BM25 in SQL. Built into PostgreSQL, so the embedded server
// needs nothing more.
import { QueryTypes, type Sequelize } from 'sequelize';
import { hitOf, MAX_TOP_K, type ChunkRow, type RankedList, type SearchHit } from './document-search';
import { anyOf, parseSearchQuery } from './search-query';

// Plain text, no markup to escape: the snippet is shown as is by whatever renders it. One window
// around the chunk's best cover of the query (fragment mode picks fragments in text order instead).
const HEADLINE_OPTIONS = 'MaxWords=35, MinWords=15, StartSel="", StopSel=""';

// Written out where used, not in a CTE: a constant tsquery lets the planner pick the GIN index.
const ANY_TERM = `websearch_to_tsquery('english', :include)`;
const NO_TERM = `websearch_to_tsquery('english', :exclude)`;
/** BM25's term-frequency saturation and length normalisation: the values the method is usually run with. */
const K1 = 1.2;
const B = 0.75;

/**
 * Okapi BM25 over the chunks that hold any of the query's terms, best first; ties in (document_id,
 * chunk_index) order, so equal chunks always come back in the same order.
 * - idf(l) = ln(1 + (N - df + 0.5) / (df + 0.5)): N the agent's chunks, df those holding lexeme l
 *   (counted through the GIN index), so a rare word weighs more than a common one;
 * - each lexeme's count in the chunk (its positions) saturates: tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)),
 *   with dl the chunk's distinct lexemes and avgdl their mean over the matching chunks (reading every
 *   chunk of a large agent for it would cost more than it changes);
 * - k1 = 1.2, b = 0.75, the usual values.
 * score = bm25 / (sum of idf (k1 + 1)), the most a chunk could score for this query: in (0, 1).
 */
const SEARCH_SQL = `
  WITH terms AS (
    SELECT DISTINCT l AS lexeme FROM unnest(tsvector_to_array(to_tsvector('english', :words))) AS l
  ),
  weights AS (
    SELECT t.lexeme, ln(1 + (n.chunks - df.chunks + 0.5) / (df.chunks + 0.5)) AS idf
      FROM terms t
     CROSS JOIN (SELECT count(*)::float8 AS chunks FROM document_chunks WHERE agent_id = :agentId) n
     CROSS JOIN LATERAL (
       SELECT count(*)::float8 AS chunks FROM document_chunks c
        WHERE c.agent_id = :agentId AND c.tsv @@ quote_literal(t.lexeme)::tsquery
     ) df
  ),
  candidates AS (
    SELECT c.id, c.document_id, c.chunk_index, c.content, c.tsv, length(c.tsv)::float8 AS dl
      FROM document_chunks c
     WHERE c.agent_id = :agentId
       AND c.tsv @@ ${ANY_TERM}
       AND NOT (numnode(${NO_TERM}) > 0 AND c.tsv @@ ${NO_TERM})
  ),
  hits AS (
    SELECT c.id, c.document_id, c.chunk_index, c.content,
           sum(w.idf * (u.tf * ${K1 + 1}) / (u.tf + ${K1} * (${1 - B} + ${B} * c.dl / a.avgdl))) AS bm25
      FROM candidates c
     CROSS JOIN (SELECT avg(dl) AS avgdl FROM candidates) a
     CROSS JOIN LATERAL (SELECT lexeme, coalesce(array_length(positions, 1), 1)::float8 AS tf FROM unnest(c.tsv)) u
      JOIN weights w ON w.lexeme = u.lexeme
     GROUP BY c.id, c.document_id, c.chunk_index, c.content
     ORDER BY bm25 DESC, c.document_id, c.chunk_index
     LIMIT :topK
  )
  SELECT h.id, h.document_id, coalesce(d.title, '') AS title, h.chunk_index, h.content,
         regexp_replace(ts_headline('english', h.content, ${ANY_TERM}, :headline), '\\s+', ' ', 'g') AS snippet,
         h.bm25 / (SELECT sum(idf) * ${K1 + 1} FROM weights) AS score
    FROM hits h JOIN documents d ON d.id = h.document_id
   ORDER BY h.bm25 DESC, h.document_id, h.chunk_index`;

interface HitRow extends ChunkRow {
  snippet: string;
}

/** The lexical list: chunks holding the query's words. */
export class PgFullTextSearch implements RankedList {
  constructor(private readonly sequelize: Sequelize) {}

  async search(agentId: number, query: string, topK: number): Promise<SearchHit[]> {
    if (!Number.isInteger(topK) || topK < 1) throw new RangeError(`search() needs a positive integer topK (got ${topK}).`);
    const terms = parseSearchQuery(query);
    if (terms.include.length === 0) return [];
    const rows = await this.sequelize.query<HitRow>(SEARCH_SQL, {
      replacements: {
        agentId,
        include: anyOf(terms.include),
        exclude: anyOf(terms.exclude),
        words: terms.include.join(' '),
        topK: Math.min(topK, MAX_TOP_K),
        headline: HEADLINE_OPTIONS,
      },
      type: QueryTypes.SELECT,
    });
    return rows.map((r) => hitOf(r, r.snippet.trim(), 'lexical'));
  }
}
