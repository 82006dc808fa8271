// Cuts a long line into pieces a sentence splitter can take whole (SEMANTICS §12b): sbd's cost grows
// with the square of a line's sentences (40,000 short sentences on one line took 11.5 s), so it only
// ever sees pieces of at most MAX_PIECE characters. A cut is made where a sentence surely ends (after
// `.`, `!` or `?` and a space), else at a space, else anywhere but inside a surrogate pair; each cut
// looks back at most one piece, so the whole scan is linear.

/** The longest piece a splitter is given: about a page, far more than any sentence, 1 ms of sbd. */
export const MAX_PIECE = 2000;

export interface Piece {
  start: number;
  end: number;
}

/** The line's pieces, in order, covering it whole: one piece when it is short. */
export function piecesOf(line: string, max = MAX_PIECE): Piece[] {
  const pieces: Piece[] = [];
  let start = 0;
  while (line.length - start > max) {
    const cut = cutIn(line, start, start + max);
    pieces.push({ start, end: cut });
    start = cut;
  }
  pieces.push({ start, end: line.length });
  return pieces;
}

/** Where to end the piece that starts at `start`, at most at `limit`: never at `start` itself. */
function cutIn(line: string, start: number, limit: number): number {
  // Only the window's later half is searched, so every piece is at least half the maximum long.
  const floor = start + Math.floor((limit - start) / 2);
  let space = -1;
  for (let i = limit; i > floor; i--) {
    if (!isSpace(line.charCodeAt(i - 1))) continue;
    if (isTerminator(line.charCodeAt(i - 2))) return i;
    if (space === -1) space = i;
  }
  if (space !== -1) return space;
  // A low surrogate starts no character: cut before its high half.
  return isLowSurrogate(line.charCodeAt(limit)) ? limit - 1 : limit;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d || code === 0xa0 || code === 0x3000;
}

function isTerminator(code: number): boolean {
  return code === 0x2e || code === 0x21 || code === 0x3f;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
