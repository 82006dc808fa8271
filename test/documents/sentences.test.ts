// Sentence splitting in linear time (SEMANTICS §12b): a long line reaches sbd in pieces, cut where a
// sentence surely ends, so one line of 40,000 short sentences no longer takes seconds.
import { piecesOf } from '../../src/core/sentence-pieces';
import { sentenceSpans } from '../../src/documents/sentences';
import { sentencesOf } from '../../src/llm/local/email-text';

const LINE = 'Ab cd. '.repeat(40_000);
const QUARTER = 'Ab cd. '.repeat(10_000);

/**
 * The best of three timings of `work`: the suite shares the machine's CPUs, and a run that met a
 * busy moment says nothing of how the work grows.
 */
async function bestOf(work: () => unknown): Promise<number> {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await work();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

// Linear: four times the sentences take about four times as long; the quadratic split took sixteen
// times as long (seconds for this line). A ratio holds on a loaded machine, where a bound in ms did not.
test('when a line holds four times the short sentences, then finding them takes about four times as long, not sixteen', async () => {
  const spans = await sentenceSpans(LINE);
  expect(spans).toHaveLength(40_000);
  expect(spans.every((s) => LINE.slice(s.start, s.end) === 'Ab cd.')).toBe(true);
  const ratio = (await bestOf(() => sentenceSpans(LINE))) / (await bestOf(() => sentenceSpans(QUARTER)));
  expect(ratio).toBeLessThan(8);
});

test('when the local model reads such a line, then its time grows with the line as the documents’ does', async () => {
  expect(sentencesOf([LINE])).toHaveLength(40_000);
  const ratio = (await bestOf(() => sentencesOf([LINE]))) / (await bestOf(() => sentencesOf([QUARTER])));
  expect(ratio).toBeLessThan(8);
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
