// Splits a document into search chunks on sentence boundaries: about 1,000 characters each, with the
// last sentences of one chunk repeated at the start of the next so that an answer spanning the cut
// is still found whole. Every chunk is a verbatim slice of the text (extractive answers rely on it).
import { sentenceSpans, type Span } from './sentences';

export interface ChunkOptions {
  /** The most characters (UTF-16 code units) a chunk may hold. Default 1000. */
  maxChars?: number;
  /** The most characters of whole sentences repeated from the previous chunk. Default 200. */
  overlapChars?: number;
}

export interface Chunk {
  index: number;
  content: string;
  /** Where the chunk sits in the text: content === text.slice(start, end). */
  start: number;
  end: number;
}

export const DEFAULT_CHUNK_OPTIONS: Required<ChunkOptions> = { maxChars: 1000, overlapChars: 200 };

/** The text's chunks, letting the event loop take other work while the sentences are found (a document upload). */
export async function chunkText(text: string, options: ChunkOptions = {}): Promise<Chunk[]> {
  const settings = checked(options);
  return chunksOfSpans(text, await sentenceSpans(text), settings);
}

function checked(options: ChunkOptions): Required<ChunkOptions> {
  const { maxChars, overlapChars } = { ...DEFAULT_CHUNK_OPTIONS, ...options };
  if (!(maxChars >= 1) || !(overlapChars >= 0) || overlapChars >= maxChars) {
    throw new RangeError(`chunkText needs maxChars >= 1 and 0 <= overlapChars < maxChars (got ${maxChars}, ${overlapChars}).`);
  }
  return { maxChars, overlapChars };
}

function chunksOfSpans(text: string, spans: Span[], { maxChars, overlapChars }: Required<ChunkOptions>): Chunk[] {
  const units = spans.flatMap((s) => (s.end - s.start > maxChars ? splitLong(text, s, maxChars) : [s]));
  const chunks: Chunk[] = [];
  let first = 0;
  while (first < units.length) {
    let last = first;
    while (last + 1 < units.length && units[last + 1]!.end - units[first]!.start <= maxChars) last++;
    const start = units[first]!.start;
    const end = units[last]!.end;
    chunks.push({ index: chunks.length, content: text.slice(start, end), start, end });
    if (last === units.length - 1) break;
    first = nextFirst(units, first, last, maxChars, overlapChars);
  }
  return chunks;
}

/**
 * The first unit of the next chunk: as many trailing units of this chunk as fit in the overlap,
 * never all of them (so each chunk moves forward), and never so many that the next unit no longer fits.
 */
function nextFirst(units: Span[], first: number, last: number, maxChars: number, overlapChars: number): number {
  const end = units[last]!.end;
  let next = last + 1;
  while (next - 1 > first && end - units[next - 1]!.start <= overlapChars) next--;
  while (next <= last && units[last + 1]!.end - units[next]!.start > maxChars) next++;
  return next;
}

/** A sentence longer than a chunk, cut at the last whitespace that fits (mid-word only when none does). */
function splitLong(text: string, span: Span, maxChars: number): Span[] {
  const pieces: Span[] = [];
  let start = span.start;
  while (start < span.end) {
    if (span.end - start <= maxChars) {
      pieces.push({ start, end: span.end });
      break;
    }
    let cut = start + maxChars;
    const space = lastWhitespace(text, start, cut);
    if (space > start) cut = space;
    else if (isLowSurrogate(text.charCodeAt(cut)) && cut - 1 > start) cut--; // never split a surrogate pair
    let end = cut;
    while (end > start && /\s/.test(text[end - 1]!)) end--;
    pieces.push({ start, end });
    start = cut;
    while (start < span.end && /\s/.test(text[start]!)) start++;
  }
  return pieces;
}

/** The index of the last whitespace character in text[from, to], or -1. */
function lastWhitespace(text: string, from: number, to: number): number {
  for (let i = to; i > from; i--) if (/\s/.test(text[i]!)) return i;
  return -1;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
