// Finds the sentences of a text as trimmed spans, so that callers can cut chunks or pick answer
// sentences that are always verbatim slices of the original.
import { sentences } from 'sbd';

export interface Span {
  start: number;
  end: number;
}

/**
 * Lines are split first: headings and list items rarely end with a full stop, and sbd would run
 * them into the next sentence.
 */
export function sentenceSpans(text: string): Span[] {
  const spans: Span[] = [];
  const line = /[^\n]+/g;
  for (let m = line.exec(text); m; m = line.exec(text)) {
    const lineStart = m.index;
    const lineText = m[0];
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
  return spans;
}
