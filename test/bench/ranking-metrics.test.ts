// The benchmark's ranking metrics on rankings small enough to score by hand.
import { averagePrecision, mean, ndcgAtK, rankDocuments } from '../../bench/ranking-metrics';

describe('rankDocuments', () => {
  it('when a document has several chunks among the hits, then it ranks once, at its best chunk', () => {
    expect(rankDocuments([5, 3, 5, 7, 3])).toEqual([5, 3, 7]);
  });
});

describe('averagePrecision', () => {
  // Relevant: 1, 3 and 9 (9 never retrieved); 2 judged not relevant (gain 0).
  const judged = new Map([
    [1, 4],
    [3, 1],
    [9, 2],
    [2, 0],
  ]);

  it('when relevant documents rank 1st and 3rd of 3 relevant, then it is (1/1 + 2/3) / 3', () => {
    expect(averagePrecision([1, 2, 3, 4, 5], judged)).toBeCloseTo(5 / 9, 12);
  });

  it('when cut at 2, then the relevant document at rank 3 adds nothing and the denominator stays 3', () => {
    expect(averagePrecision([1, 2, 3, 4, 5], judged, 2)).toBeCloseTo(1 / 3, 12);
  });

  it('when every relevant document comes first, then it is 1, whatever their grades', () => {
    expect(averagePrecision([9, 3, 1, 2], judged)).toBe(1);
  });

  it('when no relevant document is retrieved, or nothing is, then it is 0', () => {
    expect(averagePrecision([2, 4, 5], judged)).toBe(0);
    expect(averagePrecision([], judged)).toBe(0);
  });

  it('when the query has no relevant document, then it throws: the query is left out, not scored', () => {
    expect(() => averagePrecision([1], new Map([[1, 0]]))).toThrow(RangeError);
  });

  it('when a document is listed twice, then it throws', () => {
    expect(() => averagePrecision([1, 1], judged)).toThrow(RangeError);
  });
});

describe('ndcgAtK', () => {
  const judged = new Map([
    [1, 3],
    [2, 1],
    [3, 2],
  ]);
  const IDEAL_AT_3 = 3 + 2 / Math.log2(3) + 1 / 2;

  it('when gains 1, 0, 3 are at ranks 1 to 3, then it is (1 + 0 + 3/2) / (3 + 2/log2(3) + 1/2)', () => {
    expect(ndcgAtK([2, 4, 1], judged, 3)).toBeCloseTo(2.5 / IDEAL_AT_3, 12);
    expect(ndcgAtK([2, 4, 1], judged, 3)).toBeCloseTo(0.525, 3);
  });

  it('when k is 1, then only the first document counts, against the best gain', () => {
    expect(ndcgAtK([2, 4, 1], judged, 1)).toBeCloseTo(1 / 3, 12);
  });

  it('when the ranking is the ideal order, then it is 1', () => {
    expect(ndcgAtK([1, 3, 2], judged, 10)).toBe(1);
  });

  it('when the ranking is shorter than k, then the ideal still counts every judged gain', () => {
    expect(ndcgAtK([1], judged, 10)).toBeCloseTo(3 / IDEAL_AT_3, 12);
  });

  it('when nothing relevant is retrieved, then it is 0', () => {
    expect(ndcgAtK([], judged, 10)).toBe(0);
    expect(ndcgAtK([7, 8], judged, 10)).toBe(0);
  });

  it('when the query has no relevant document or k is not a positive integer, then it throws', () => {
    expect(() => ndcgAtK([1], new Map(), 10)).toThrow(RangeError);
    expect(() => ndcgAtK([1], judged, 0)).toThrow(RangeError);
  });
});

describe('mean', () => {
  it('when given values, then it is their average; when given none, then it is NaN', () => {
    expect(mean([0.5, 1, 0])).toBeCloseTo(0.5, 12);
    expect(mean([])).toBeNaN();
  });
});
