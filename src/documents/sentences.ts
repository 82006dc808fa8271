// Finds the sentences of a text as trimmed spans, so that callers can cut chunks or pick answer
// sentences that are always verbatim slices of the original.
import { sentences } from 'sbd';
import { piecesOf } from '../core/sentence-pieces';

export interface Span {
  start: number;
  end: number;
}

/** The longest the splitter runs before it lets the event loop take other work (SEMANTICS §12b). */
const SLICE_MS = 10;

/**
 * The text's sentences, lines split first (headings and list items rarely end with a full stop,
 * and sbd would run them into the next sentence), giving the event loop a turn every SLICE_MS: a
 * 1 MB document's sentences take sbd about 100 ms, which must not hold every other request for as long.
 */
export async function sentenceSpans(text: string): Promise<Span[]> {
  const spans: Span[] = [];
  let since = performance.now();
  for (const piece of linePieces(text)) {
    pieceSpans(text.slice(piece.start, piece.end), piece.start, spans);
    if (performance.now() - since >= SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      since = performance.now();
    }
  }
  return spans;
}

/** The text's lines, each in pieces sbd takes in linear time (core/sentence-pieces.ts), as spans of the text. */
function* linePieces(text: string): Generator<Span> {
  const line = /[^\n]+/g;
  for (let m = line.exec(text); m; m = line.exec(text)) {
    for (const piece of piecesOf(m[0])) yield { start: m.index + piece.start, end: m.index + piece.end };
  }
}

function pieceSpans(lineText: string, lineStart: number, spans: Span[]): void {
  let cursor = 0;
  for (const sentence of sentences(lineText, { preserve_whitespace: true })) {
    const trimmed = sentence.trim();
    if (!trimmed) continue;
    const at = lineText.indexOf(trimmed, cursor);
    // sbd changed the text (it should not with preserve_whitespace): keep the rest of the line whole.
    if (at < 0) break;
    spans.push({ start: lineStart + at, end: lineStart + at + trimmed.length });
    cursor = at + trimmed.length;
  }
  const rest = lineText.slice(cursor);
  if (rest.trim()) {
    spans.push({ start: lineStart + cursor + rest.search(/\S/), end: lineStart + cursor + rest.trimEnd().length });
  }
}
