// A position in the decision log (SEMANTICS §16): the writing transaction's id and the entry's
// position, the pair the log is read in order of. Given to readers as an opaque token, base64url of
// `v1:<xact>:<position>`, and read back only in exactly that spelling, so one position has one
// token and anything else is refused rather than guessed at.

export interface DecisionCursor {
  /** The writing transaction's id (PostgreSQL's xid8, 0 to 2^64 - 1), in decimal. */
  xact: string;
  /** The entry's position (a bigint, 0 to 2^63 - 1), in decimal. */
  position: string;
}

/** Before every entry: where a reader with no cursor starts. */
export const LOG_START: DecisionCursor = { xact: '0', position: '0' };

/** Longer than any token encodeCursor makes (58 characters at most), so a long value is refused unread. */
export const MAX_CURSOR_LENGTH = 96;

const MAX_XACT = 2n ** 64n - 1n;
const MAX_POSITION = 2n ** 63n - 1n;
const TOKEN = /^[A-Za-z0-9_-]+$/;
const PAYLOAD = /^v1:(0|[1-9][0-9]{0,19}):(0|[1-9][0-9]{0,18})$/;

export function encodeCursor(cursor: DecisionCursor): string {
  return Buffer.from(`v1:${cursor.xact}:${cursor.position}`, 'utf8').toString('base64url');
}

/** The position a token names; null for anything encodeCursor did not make. */
export function decodeCursor(token: string): DecisionCursor | null {
  if (token.length === 0 || token.length > MAX_CURSOR_LENGTH || !TOKEN.test(token)) return null;
  const match = PAYLOAD.exec(Buffer.from(token, 'base64url').toString('latin1'));
  if (!match) return null;
  const cursor = { xact: match[1]!, position: match[2]! };
  if (BigInt(cursor.xact) > MAX_XACT || BigInt(cursor.position) > MAX_POSITION) return null;
  // base64url reads some tokens that differ in their last character's spare bits alike: one spelling only.
  return encodeCursor(cursor) === token ? cursor : null;
}
