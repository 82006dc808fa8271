// Document search with PostgreSQL full text: the chunks' generated tsvector, its GIN index,
// websearch_to_tsquery and ts_rank_cd. Built into PostgreSQL, so the embedded server needs nothing more.
import { QueryTypes, type Sequelize } from 'sequelize';
import { MAX_TOP_K, type RankedList, type SearchHit } from './document-search';
import { anyOf, parseSearchQuery } from './search-query';

// Plain text, no markup to escape: the snippet is shown as is by whatever renders it. One window
// around the chunk's best cover of the query (fragment mode picks fragments in text order instead).
const HEADLINE_OPTIONS = 'MaxWords=35, MinWords=15, StartSel="", StopSel=""';

// Written out where used, not in a CTE: a constant tsquery lets the planner pick the GIN index.
const ANY_TERM = `websearch_to_tsquery('english', :include)`;
const NO_TERM = `websearch_to_tsquery('english', :exclude)`;
const LEXEMES = `ARRAY(SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('english', :words))))`;

/**
 * The ranking, best first:
 * 1. matched: how many of the query's distinct lexemes the chunk holds (a chunk answering more of
 *    the question beats one repeating a single word);
 * 2. rank: ts_rank_cd's cover density over the query's terms, scaled into [0, 1);
 * 3. document_id, then chunk_index, so equal chunks always come back in the same order.
 * score = (matched + rank) / (lexemes + 1): in (0, 1), and ordered exactly as the list is.
 */
const SEARCH_SQL = `
  WITH hits AS (
    SELECT c.id, c.document_id, c.chunk_index, c.content,
           (SELECT count(*) FROM unnest(tsvector_to_array(c.tsv)) AS l WHERE l = ANY (${LEXEMES})) AS matched,
           ts_rank_cd(c.tsv, ${ANY_TERM}, 32) AS rank
      FROM document_chunks c
     WHERE c.agent_id = :agentId
       AND c.tsv @@ ${ANY_TERM}
       AND NOT (numnode(${NO_TERM}) > 0 AND c.tsv @@ ${NO_TERM})
     ORDER BY matched DESC, rank DESC, c.document_id, c.chunk_index
     LIMIT :topK
  )
  SELECT h.id, h.document_id, coalesce(d.title, '') AS title, h.chunk_index, h.content,
         regexp_replace(ts_headline('english', h.content, ${ANY_TERM}, :headline), '\\s+', ' ', 'g') AS snippet,
         (h.matched + h.rank) / (cardinality(${LEXEMES}) + 1) AS score
    FROM hits h JOIN documents d ON d.id = h.document_id
   ORDER BY h.matched DESC, h.rank DESC, h.document_id, h.chunk_index`;

interface HitRow {
  id: number | string;
  document_id: number | string;
  title: string;
  chunk_index: number;
  content: string;
  snippet: string;
  score: number | string;
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
    return rows.map((r) => ({
      chunk_id: Number(r.id),
      document_id: Number(r.document_id),
      title: r.title,
      chunk_index: r.chunk_index,
      snippet: r.snippet.trim(),
      score: Math.round(Number(r.score) * 1e6) / 1e6,
      found_by: ['lexical'],
      content: r.content,
    }));
  }
}
