// Ranking quality against relevance judgements, as trec_eval computes it, for `npm run bench:ranking`.
// A ranking is document ids, best first, each at most once. Judgements of one query map a document
// id to its gain: over 0 is relevant, anything not in the map is not relevant.
//
// Average precision at a cutoff n (trec_eval's map_cut_n), R the number of relevant documents:
//   AP@n = (1 / R) · Σ_{i ≤ n, document i relevant} P(i),   P(i) = relevant documents in the top i / i
// R counts every relevant document, retrieved or not, so one missing from the top n adds 0.
//
// Normalised discounted cumulative gain at k, with linear gains (trec_eval's ndcg_cut_k):
//   DCG@k = Σ_{i ≤ k} gain(document i) / log2(i + 1)
//   nDCG@k = DCG@k of the ranking / DCG@k of the ideal ranking (every judged gain, largest first)
//
// Both are undefined for a query with no relevant document: they throw, and the caller leaves such
// a query out.

/** A query's judged documents: document id to gain, relevant when over 0. */
export type Judgements = ReadonlyMap<number, number>;

/** Document ids in the order their first hit comes: a document ranks at its best chunk. */
export function rankDocuments(hitDocumentIds: Iterable<number>): number[] {
  return [...new Set(hitDocumentIds)];
}

export function averagePrecision(ranking: readonly number[], judgements: Judgements, cutoff = Infinity): number {
  checkRanking(ranking);
  const relevant = [...judgements.values()].filter((gain) => gain > 0).length;
  if (relevant === 0) throw new RangeError('average precision needs at least one relevant document');
  let found = 0;
  let sum = 0;
  ranking.slice(0, cutoff).forEach((doc, i) => {
    if ((judgements.get(doc) ?? 0) > 0) {
      found++;
      sum += found / (i + 1);
    }
  });
  return sum / relevant;
}

export function ndcgAtK(ranking: readonly number[], judgements: Judgements, k: number): number {
  checkRanking(ranking);
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`nDCG needs a positive integer k (got ${k})`);
  const ideal = dcg(
    [...judgements.values()].filter((gain) => gain > 0).sort((a, b) => b - a),
    k,
  );
  if (ideal === 0) throw new RangeError('nDCG needs at least one relevant document');
  return (
    dcg(
      ranking.map((doc) => Math.max(judgements.get(doc) ?? 0, 0)),
      k,
    ) / ideal
  );
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

function dcg(gains: readonly number[], k: number): number {
  return gains.slice(0, k).reduce((sum, gain, i) => sum + gain / Math.log2(i + 2), 0);
}

function checkRanking(ranking: readonly number[]): void {
  if (new Set(ranking).size !== ranking.length) throw new RangeError('a ranking lists each document at most once');
}
