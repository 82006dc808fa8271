// The chunker: sentence boundaries, the size bound, the overlap, and the edge cases.
import fc from 'fast-check';
import { chunkText } from '../../src/documents/chunker';
import { sentenceSpans } from '../../src/documents/sentences';
import { loadCorpus } from '../fixtures/corpus/load';

/** The sentences themselves, each a verbatim slice of the text, as the chunker cuts between them. */
const splitSentences = async (text: string): Promise<string[]> => (await sentenceSpans(text)).map((s) => text.slice(s.start, s.end));

const sentence = (i: number) => `Sentence ${i} says that the shop on Market Street sells ${i} pints of melted ice cream.`;
const prose = (n: number) => Array.from({ length: n }, (_, i) => sentence(i)).join(' ');

describe('chunkText', () => {
  it('when the text is empty or only whitespace, then there are no chunks', async () => {
    expect(await chunkText('')).toEqual([]);
    expect(await chunkText(' \n\t \n')).toEqual([]);
  });

  it('when the text is short, then it is one chunk holding the trimmed text', async () => {
    expect(await chunkText('  Refunds are paid in 5 days. Ask us.  ')).toEqual([
      { index: 0, content: 'Refunds are paid in 5 days. Ask us.', start: 2, end: 37 },
    ]);
  });

  it('when the text is long, then every chunk is at most 1,000 characters and a verbatim slice of it', async () => {
    const text = prose(60);
    const chunks = await chunkText(text);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(c.content.length).toBeLessThanOrEqual(1000);
      expect(text.slice(c.start, c.end)).toBe(c.content);
    }
    expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
  });

  it('when the text is long, then chunks start and end on sentence boundaries', async () => {
    const text = prose(60);
    const sentences = new Set(await splitSentences(text));
    for (const c of await chunkText(text)) {
      const inside = await splitSentences(c.content);
      for (const s of inside) expect(sentences.has(s)).toBe(true);
      expect(c.content.startsWith('Sentence ')).toBe(true);
      expect(c.content.endsWith('ice cream.')).toBe(true);
    }
  });

  it('when one chunk ends, then the next repeats its last sentences, at most 200 characters of them', async () => {
    const chunks = await chunkText(prose(60));
    for (let i = 1; i < chunks.length; i++) {
      const previous = chunks[i - 1]!;
      const current = chunks[i]!;
      const overlap = previous.end - current.start;
      expect(overlap).toBeGreaterThan(0);
      expect(overlap).toBeLessThanOrEqual(200);
      expect(previous.content.endsWith(current.content.slice(0, overlap))).toBe(true);
    }
  });

  it('when the chunks are joined without their overlaps, then they cover every sentence of the text', async () => {
    const text = prose(45);
    const covered = new Set((await Promise.all((await chunkText(text)).map((c) => splitSentences(c.content)))).flat());
    expect([...covered].sort()).toEqual([...new Set(await splitSentences(text))].sort());
  });

  it('when a single sentence is longer than a chunk, then it is split at spaces into chunks within the bound', async () => {
    const huge = `${'cone '.repeat(700)}end.`;
    const chunks = await chunkText(huge);
    expect(chunks.length).toBe(4);
    for (const c of chunks) {
      expect(c.content.length).toBeLessThanOrEqual(1000);
      expect(c.content).toMatch(/^cone|^end/);
      expect(c.content).toMatch(/cone$|end\.$/);
    }
    expect(chunks.map((c) => c.content).join(' ')).toBe(huge);
  });

  it('when a single word is longer than a chunk, then it is cut mid-word, never past the bound', async () => {
    const chunks = await chunkText('x'.repeat(2500));
    expect(chunks.map((c) => c.content.length)).toEqual([1000, 1000, 500]);
  });

  it('when a text has headings and list lines without full stops, then each line is its own sentence', async () => {
    expect(await splitSentences('# Hours\nMonday: 11 am to 9 pm\n- Sunday: noon to 8 pm. Closed on holidays.')).toEqual([
      '# Hours',
      'Monday: 11 am to 9 pm',
      '- Sunday: noon to 8 pm.',
      'Closed on holidays.',
    ]);
  });

  it('when the options are smaller, then they bound the chunks the same way', async () => {
    const chunks = await chunkText(prose(10), { maxChars: 300, overlapChars: 100 });
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) expect(c.content.length).toBeLessThanOrEqual(300);
  });

  it('when the overlap is not smaller than the chunk size, then chunkText refuses the options', async () => {
    await expect(chunkText('a.', { maxChars: 100, overlapChars: 100 })).rejects.toThrow(RangeError);
  });

  it('when the corpus is chunked, then its long documents make several chunks', async () => {
    const counts = await Promise.all(loadCorpus().map(async (d) => (await chunkText(d.content)).length));
    expect(Math.max(...counts)).toBeGreaterThanOrEqual(3);
    expect(counts.filter((n) => n > 1).length).toBeGreaterThanOrEqual(3);
  });

  it('when any text is chunked, then each chunk is a non-empty trimmed slice within the bound, and chunks move forward', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.lorem({ maxCount: 30, mode: 'sentences' }), fc.string({ maxLength: 400 }), fc.constant('\n')), {
          maxLength: 40,
        }),
        fc.integer({ min: 20, max: 400 }),
        async (parts, maxChars) => {
          const text = parts.join(' ');
          const chunks = await chunkText(text, { maxChars, overlapChars: Math.floor(maxChars / 5) });
          let lastStart = -1;
          for (const c of chunks) {
            expect(c.content).toBe(text.slice(c.start, c.end));
            expect(c.content.length).toBeGreaterThan(0);
            expect(c.content.length).toBeLessThanOrEqual(maxChars);
            expect(c.content).toBe(c.content.trim());
            expect(c.start).toBeGreaterThan(lastStart);
            lastStart = c.start;
          }
          if (text.trim()) expect(chunks.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
