// A page's cursor: the sort key of the last row a page showed, handed to the client as opaque text
// (base64url of a JSON array) and read back to start the next page just after that row. A cursor
// is read only as the key it claims to be; anything else is refused, never guessed at.

/** One part of a sort key: text (a name) or a whole number (an id). */
export type KeyPart = 'text' | 'id';
export type CursorKey = (string | number)[];

/** Past this length a cursor is no key toolgate made (the longest, a 200-character name, is far shorter). */
export const MAX_CURSOR_LENGTH = 2048;

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

/** The key a cursor holds, when it holds one of this shape; else null. */
export function decodeCursor(text: string, shape: readonly KeyPart[]): CursorKey | null {
  if (text.length === 0 || text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(key) || key.length !== shape.length) return null;
  const parts = key as unknown[];
  return shape.every((part, i) => fits(part, parts[i])) ? (parts as CursorKey) : null;
}

function fits(part: KeyPart, value: unknown): boolean {
  if (part === 'text') return typeof value === 'string' && value.length <= 1000;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
