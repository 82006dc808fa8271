// Sentence splitting in linear time (SEMANTICS §12b): a long line reaches sbd in pieces, cut where a
// sentence surely ends, so one line of 40,000 short sentences no longer takes seconds.
import { piecesOf } from '../../src/core/sentence-pieces';
import { sentenceSpans } from '../../src/documents/sentences';
import { sentencesOf } from '../../src/llm/local/email-text';

const LINE = 'Ab cd. '.repeat(40_000);

test('when a line holds 40,000 short sentences, then its sentences are found in well under a second', async () => {
  const started = performance.now();
  const spans = await sentenceSpans(LINE);
  expect(performance.now() - started).toBeLessThan(1000);
  expect(spans).toHaveLength(40_000);
  expect(spans.every((s) => LINE.slice(s.start, s.end) === 'Ab cd.')).toBe(true);
});

test('when the local model reads such a line, then it finds the same sentences as fast', () => {
  const started = performance.now();
  expect(sentencesOf([LINE])).toHaveLength(40_000);
  expect(performance.now() - started).toBeLessThan(1000);
});

test('when a line is cut, then each cut follows a full stop and a space, and the pieces cover it whole', () => {
  const pieces = piecesOf(LINE);
  expect(pieces.length).toBeGreaterThan(100);
  expect(pieces.every((p, i) => p.start === (i === 0 ? 0 : pieces[i - 1]!.end) && p.end - p.start <= 2000)).toBe(true);
  expect(pieces.slice(0, -1).every((p) => LINE.slice(p.end - 2, p.end) === '. ')).toBe(true);
});

test('when a line has no space at all, then it is cut anywhere but inside a surrogate pair', () => {
  const line = '😀'.repeat(3000);
  const pieces = piecesOf(line);
  expect(pieces.map((p) => line.slice(p.start, p.end)).join('')).toBe(line);
  expect(pieces.every((p) => p.start % 2 === 0)).toBe(true);
});
