// Reciprocal rank fusion: several ranked lists of chunks made into one, by rank alone, so that a
// lexical score and a cosine (which share no scale) never have to be compared. A chunk's fused score
// is the sum over the lists that found it of 1 / (k + rank), rank counted from 1; k = 60 as in the
// method's original description, which damps the weight of the very first places.
import type { FoundBy, SearchHit } from './document-search';

const RRF_K = 60;

export interface RankedHits {
  by: FoundBy;
  hits: readonly SearchHit[];
}

const LIST_ORDER: readonly FoundBy[] = ['lexical', 'semantic'];

/**
 * The fused list, best first; ties in (document_id, chunk_index) order. A hit found by several
 * lists keeps the first list's snippet (the lexical one is built around the matched words) and
 * names every list that found it.
 */
export function fuseRankings(lists: readonly RankedHits[], topK: number, k = RRF_K): SearchHit[] {
  const fused = new Map<number, { hit: SearchHit; score: number; by: Set<FoundBy> }>();
  for (const list of [...lists].sort((a, b) => LIST_ORDER.indexOf(a.by) - LIST_ORDER.indexOf(b.by))) {
    list.hits.forEach((hit, index) => {
      const entry = fused.get(hit.chunk_id) ?? { hit, score: 0, by: new Set<FoundBy>() };
      entry.score += 1 / (k + index + 1);
      entry.by.add(list.by);
      fused.set(hit.chunk_id, entry);
    });
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.hit.document_id - b.hit.document_id || a.hit.chunk_index - b.hit.chunk_index)
    .slice(0, topK)
    .map(({ hit, score, by }) => ({
      ...hit,
      score: Math.round(score * 1e6) / 1e6,
      found_by: LIST_ORDER.filter((name) => by.has(name)),
    }));
}
