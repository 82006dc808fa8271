// Message-IDs as mail threads by them (SEMANTICS §11): a message names the thread it answers by its
// In-Reply-To and References headers. One form is kept and compared, `<id-left@id-right>`: angle
// brackets added when a client sent the bare id, and nothing else changed (ids are case-sensitive).
// An id that is not printable ASCII without spaces, or is over RFC 5322's line length, is no id:
// it threads nothing and is not stored.
import { randomBytes } from 'node:crypto';

/** RFC 5322's limit on a header line, brackets included: longer is no Message-ID any client sent. */
const MAX_MESSAGE_ID = 998;
const ID_BODY = /^[\x21-\x3b\x3d\x3f-\x7e]+$/;
const BRACKETED = /<([^<>\s]*)>/g;

/** The id in the one form kept (`<...>`), or null when it cannot be a Message-ID. */
export function normalizeMessageId(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  let id = raw.trim();
  if (id.startsWith('<') && id.endsWith('>')) id = id.slice(1, -1);
  if (id === '' || !ID_BODY.test(id) || id.length + 2 > MAX_MESSAGE_ID) return null;
  return `<${id}>`;
}

/**
 * The ids a References header (or In-Reply-To) names, in the order written, each once: the
 * bracketed ids of a header's text, or, when it holds none, its space-separated words; or each
 * element of a list. Anything that is not an id is left out.
 */
export function messageIdsOf(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  const words = typeof value === 'string' ? wordsOf(value) : value.flatMap(wordsOf);
  const ids = words.map(normalizeMessageId).filter((id): id is string => id !== null);
  return [...new Set(ids)];
}

function wordsOf(text: string): string[] {
  const bracketed = [...text.matchAll(BRACKETED)].map((m) => m[0]);
  return bracketed.length > 0 ? bracketed : text.split(/\s+/).filter((w) => w !== '');
}

/** A new Message-ID for a reply the agent writes: 128 random bits, so it names that reply alone. */
export function newMessageId(domain: string): string {
  return `<tg.${randomBytes(16).toString('hex')}@${domain}>`;
}
