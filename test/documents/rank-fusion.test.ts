// Reciprocal rank fusion over plain lists: by rank alone, 1 / (60 + rank) per list that found a chunk.
import type { FoundBy, SearchHit } from '../../src/documents/document-search';
import { fuseRankings } from '../../src/documents/rank-fusion';

/** The constant of the method's original description, which HTTP.md states. */
const RRF_K = 60;

function hit(chunk_id: number, by: FoundBy, score = 0.5): SearchHit {
  return {
    chunk_id,
    document_id: chunk_id,
    title: `Doc ${chunk_id}`,
    chunk_index: 0,
    snippet: `${by} ${chunk_id}`,
    score,
    found_by: [by],
    content: '',
  };
}

test('when a chunk is in both lists, then its score is the sum of its two reciprocal ranks and it names both lists', () => {
  const [first] = fuseRankings(
    [
      { by: 'lexical', hits: [hit(1, 'lexical'), hit(2, 'lexical')] },
      { by: 'semantic', hits: [hit(2, 'semantic'), hit(3, 'semantic')] },
    ],
    10,
  );
  expect(first).toMatchObject({ chunk_id: 2, found_by: ['lexical', 'semantic'] });
  expect(first!.score).toBeCloseTo(1 / (RRF_K + 2) + 1 / (RRF_K + 1), 6);
});

test('when two chunks hold the same rank in different lists, then the tie goes in (document_id, chunk_index) order', () => {
  const fused = fuseRankings(
    [
      { by: 'semantic', hits: [hit(7, 'semantic')] },
      { by: 'lexical', hits: [hit(4, 'lexical')] },
    ],
    10,
  );
  expect(fused.map((h) => [h.chunk_id, h.found_by])).toEqual([
    [4, ['lexical']],
    [7, ['semantic']],
  ]);
});

test("when a chunk is found by both, then it keeps the lexical list's snippet, built around the matched words", () => {
  const [only] = fuseRankings(
    [
      { by: 'semantic', hits: [hit(5, 'semantic')] },
      { by: 'lexical', hits: [hit(5, 'lexical')] },
    ],
    10,
  );
  expect(only!.snippet).toBe('lexical 5');
});

test('when topK is smaller than the fused list, then only the best topK come back', () => {
  const lexical = [1, 2, 3, 4].map((id) => hit(id, 'lexical'));
  expect(fuseRankings([{ by: 'lexical', hits: lexical }], 2).map((h) => h.chunk_id)).toEqual([1, 2]);
});

test('when one list is empty, then the other keeps its order', () => {
  const semantic = [9, 3, 6].map((id) => hit(id, 'semantic'));
  expect(
    fuseRankings(
      [
        { by: 'lexical', hits: [] },
        { by: 'semantic', hits: semantic },
      ],
      5,
    ).map((h) => h.chunk_id),
  ).toEqual([9, 3, 6]);
});
