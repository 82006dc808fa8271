// The RFC 5322 parser (email-addresses, with RFC 6532 addresses) as every reader of addresses
// calls it: it remembers its latest answers, since one request reads one From several times (its
// routing key, the greeting, the reply's addressees) and the parser costs up to 20 µs a
// character (SEMANTICS §12b). Callers hold a value to address-bounds.ts before they call.
import { parseAddressList, parseOneAddress, type ParsedGroup, type ParsedMailbox } from 'email-addresses';
import { LRUCache } from 'lru-cache';

export type ParsedAddress = ParsedMailbox | ParsedGroup;

// A parse tree is never changed by its readers, so a remembered one can be handed out again.
const one = new LRUCache<string, { parsed: ParsedAddress | null }>({ max: 256 });
const lists = new LRUCache<string, { parsed: ParsedAddress[] | null }>({ max: 256 });

/** One mailbox or group, or null for anything else (several, none, unreadable). */
export function parseOne(input: string): ParsedAddress | null {
  let hit = one.get(input);
  if (hit === undefined) {
    hit = { parsed: parseOneAddress({ input, rfc6532: true }) };
    one.set(input, hit);
  }
  return hit.parsed;
}

/** An address list's mailboxes and groups, or null when the value is not one. */
export function parseList(input: string): readonly ParsedAddress[] | null {
  let hit = lists.get(input);
  if (hit === undefined) {
    hit = { parsed: parseAddressList({ input, rfc6532: true }) };
    lists.set(input, hit);
  }
  return hit.parsed;
}
