// Who wrote: the first name to greet, from the From header's display name (parsed with
// `email-addresses`; `compromise` tells an organisation's name from a person's), and the address's
// local part for structural signals.
import nlp from 'compromise';
import { addressValueBreach } from '../../core/address-bounds';
import { parseOne } from '../../core/address-parser';
import { MAX_ADDRESS_LENGTH } from '../../core/host-name';

export interface Sender {
  /** The first name to greet, or null when the header carries no display name. */
  firstName: string | null;
  /** The address's local part, lowercased ("" when the header names no mailbox). */
  local: string;
}

export function senderOf(from: string): Sender {
  // Past the parser's bounds (SEMANTICS §12b), or longer than any address, it is not read: no name to greet.
  if (from.length > MAX_ADDRESS_LENGTH || addressValueBreach(from) !== null) return { firstName: null, local: '' };
  const parsed = parseOne(from);
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
