// The words the sender wrote in this message: quoted history, forwarded headers, the greeting and
// the signature cut away, hard-wrapped lines rejoined, then split into sentences with `sbd`.
import sbd from 'sbd';
import { piecesOf } from '../../core/sentence-pieces';

/** Past this, a body is read only in part: analysis stays fast on pasted logs and long threads. */
export const MAX_BODY_CHARS = 20_000;

const QUOTE_HEADER = /wrote:\s*$/i;
const FORWARD_MARKER = /^(-{2,}\s*(original message|forwarded message)\s*-{2,}|_{5,})\s*$/i;
const OUTLOOK_HEADER = /^(from|sent|date|to|subject):\s/i;
const SIGNATURE_DELIMITER = /^--\s?$/;
const MOBILE_FOOTER = /^sent from my\b/i;
// The closings that end a letter; a line that is only one of them starts the signature.
const CLOSING =
  /^(thanks|thank you|many thanks|thanks again|cheers|best|best regards|kind regards|warm regards|regards|sincerely|all the best|warmly|talk soon|yours truly)[,.!]?$/i;
const GREETING = /^(hi|hello|hey|dear|greetings|good (morning|afternoon|evening))\b[^.?]{0,40}[,:!]?$|^to whom it may concern[,:]?$/i;
// "Team," or "Hi all,": a few words and a comma, alone on the first line, address the reader.
const SALUTATION = /^[\p{L}'’ -]{1,30},$/u;
const BULLET = /^\s*(?:[-*•]|\d{1,2}[.)])\s+/;
// A line this long with no closing punctuation was wrapped by the mail client, not by the writer.
const WRAPPED_LINE = 50;

/** The sender's own text, as paragraphs of logical lines (each line one unit of meaning). */
export function ownText(body: string): string[] {
  const lines = readablePart(body).replace(/\r\n?/g, '\n').split('\n');
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (startsHistory(line, lines[i + 1]?.trim() ?? '')) {
      if (QUOTE_HEADER.test(line) && /^on\b/i.test(kept[kept.length - 1] ?? '') && !/[.!?]$/.test(kept[kept.length - 1])) kept.pop();
      break;
    }
    if (line.startsWith('>')) continue;
    if (SIGNATURE_DELIMITER.test(lines[i]) || MOBILE_FOOTER.test(line)) break;
    if (CLOSING.test(line) && kept.some((l) => l !== '')) break;
    kept.push(line);
  }
  const firstContent = kept.findIndex((l) => l !== '');
  if (firstContent >= 0 && (GREETING.test(kept[firstContent]) || SALUTATION.test(kept[firstContent]))) kept.splice(firstContent, 1);
  return joinWrapped(kept);
}

/** The body up to MAX_BODY_CHARS, cut after the last full sentence or line when it is longer. */
function readablePart(body: string): string {
  if (body.length <= MAX_BODY_CHARS) return body;
  const head = body.slice(0, MAX_BODY_CHARS);
  const end = Math.max(head.lastIndexOf('\n'), head.search(/[.!?][^.!?]*$/));
  return end > MAX_BODY_CHARS / 2 ? head.slice(0, end + 1) : head;
}

function startsHistory(line: string, next: string): boolean {
  if (QUOTE_HEADER.test(line) || FORWARD_MARKER.test(line)) return true;
  return /^from:\s/i.test(line) && OUTLOOK_HEADER.test(next);
}

/** Rejoins hard-wrapped lines; a blank line, a bullet or a short unpunctuated line ends a unit. */
function joinWrapped(lines: string[]): string[] {
  const units: string[] = [];
  let current = '';
  const flush = () => {
    if (current) units.push(current);
    current = '';
  };
  for (const raw of lines) {
    if (raw === '') {
      flush();
      continue;
    }
    const bullet = BULLET.test(raw);
    const line = raw.replace(BULLET, '');
    if (bullet) flush();
    current = current ? `${current} ${line}` : line;
    const wrapped = !bullet && line.length >= WRAPPED_LINE && !/[.!?:;]$/.test(line);
    if (!wrapped) flush();
  }
  flush();
  return units;
}

/** The sentences of some logical lines, in order, each trimmed and non-empty. */
export function sentencesOf(units: string[]): string[] {
  const out: string[] = [];
  for (const unit of units) {
    // A long unit goes to sbd in pieces, which it splits in linear time (core/sentence-pieces.ts).
    for (const piece of piecesOf(unit)) {
      for (const s of sbd.sentences(unit.slice(piece.start, piece.end), { newline_boundaries: true })) {
        const t = s.trim();
        if (t) out.push(t);
      }
    }
  }
  return out;
}
