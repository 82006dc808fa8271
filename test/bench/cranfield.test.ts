// The Cranfield collection stored for `npm run bench:ranking` is whole, and read as its judgements number it.
import { judgementsOf, loadCranfield } from '../../bench/cranfield';

const collection = loadCranfield();

it('when loaded, then it holds 1400 documents, 225 queries and 1837 judgements, numbered from 1', () => {
  expect(collection.documents.map((d) => d.id)).toEqual(Array.from({ length: 1400 }, (_, i) => i + 1));
  expect(collection.queries.map((q) => q.id)).toEqual(Array.from({ length: 225 }, (_, i) => i + 1));
  expect(collection.qrels).toHaveLength(1837);
  expect(collection.qrels.every((q) => q.queryId >= 1 && q.queryId <= 225 && q.documentId >= 1 && q.documentId <= 1400)).toBe(true);
});

it('when loaded, then only documents 471 and 995 have no text, and every text is on one line', () => {
  expect(collection.documents.filter((d) => d.text === '').map((d) => d.id)).toEqual([471, 995]);
  expect(collection.documents[0]!.title).toBe('experimental investigation of the aerodynamics of a wing in a slipstream .');
  expect(collection.documents.some((d) => /\n|\s{2}/.test(d.text))).toBe(false);
});

it('when queries are read, then each is numbered by its place in the file, as the judgements number them', () => {
  // The third query is `.I 004` in cran.qry; its judged documents are about heat conduction in layered slabs.
  const third = collection.queries[2]!;
  expect(third).toEqual({ id: 3, text: 'what problems of heat conduction in composite slabs have been solved so far .' });
  expect(collection.qrels.filter((q) => q.queryId === 3).map((q) => q.documentId)).toEqual(expect.arrayContaining([5, 6, 90, 91]));
});

it('when graded, then grade 1 gains 4, grade 4 gains 1, grade -1 gains 0, and every query has a relevant document', () => {
  const graded = judgementsOf(collection, 'graded');
  const gains = collection.qrels.map((q) => [q.grade, graded.get(q.queryId)!.get(q.documentId)]);
  expect(new Set(gains.map(([grade, gain]) => `${grade}:${gain}`))).toEqual(new Set(['1:4', '2:3', '3:2', '4:1', '-1:0']));
  expect(collection.queries.every((q) => [...graded.get(q.id)!.values()].some((gain) => gain > 0))).toBe(true);
});

it('when binary, then every judged pair gains 1', () => {
  const binary = judgementsOf(collection, 'binary');
  expect(collection.qrels.every((q) => binary.get(q.queryId)!.get(q.documentId) === 1)).toBe(true);
});
