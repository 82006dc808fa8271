// Who wrote: the first name to greet, from the From header's display name (parsed with
// `email-addresses`; `compromise` tells an organisation's name from a person's), and the address's
// local part for structural signals.
import nlp from 'compromise';
import { parseOneAddress } from 'email-addresses';

export interface Sender {
  /** The first name to greet, or null when the header carries no display name. */
  firstName: string | null;
  /** The address's local part, lowercased ("" when the header names no mailbox). */
  local: string;
}

export function senderOf(from: string): Sender {
  const parsed = parseOneAddress({ input: from, rfc6532: true });
  if (parsed === null || parsed.type !== 'mailbox') return { firstName: null, local: '' };
  return { firstName: firstNameOf(parsed.name), local: parsed.local.toLowerCase() };
}

/**
 * "Jane Cooper" → Jane; "Cooper, Jane" → Jane. None for a name with no letters, or one that reads
 * as an organisation ("The Dairy Digest", "Downtown Merchants Association"): no one is called The.
 */
function firstNameOf(displayName: string | null): string | null {
  if (!displayName) return null;
  const name = displayName.includes(',') ? displayName.slice(displayName.indexOf(',') + 1) : displayName;
  const doc = nlp(name);
  if (doc.has('#Organization') || !doc.has('^#Noun')) return null;
  const first =
    name
      .trim()
      .split(/\s+/)[0]
      ?.replace(/[^\p{L}\p{M}'’-]/gu, '') ?? '';
  return /\p{L}/u.test(first) ? first : null;
}
