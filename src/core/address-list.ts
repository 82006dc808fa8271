// The routing keys of the addresses a message names in To, Cc or Reply-To (SEMANTICS §11): every
// mailbox of an RFC 5322 address list (a group's members included), each reduced as a sender is
// (§3). Values the parser cannot read, values past the parser's bounds (SEMANTICS §12b), and
// mailboxes with no key, add nothing.
import { addressValueBreach, needsParser, plainListKeys } from './address-bounds';
import { parseList } from './address-parser';
import { INPUT_BOUNDS } from './input-bounds';
import { routingKeyOf } from './routing-key';

/** Past this, a header's addresses are not read: no real conversation holds more. */
const MAX_ADDRESSES = INPUT_BOUNDS.address_count;

export function routingKeysOf(values: string | readonly string[] | undefined): string[] {
  if (values === undefined) return [];
  const keys = new Set<string>();
  // The routes refuse a message past these bounds; a host's own caller is held to them here.
  let parsed = 0;
  for (const value of typeof values === 'string' ? [values] : values) {
    if (needsParser(value)) {
      parsed += value.length;
      if (parsed > INPUT_BOUNDS.address_text_length) return [...keys];
    }
    for (const key of keysOf(value)) {
      if (keys.size >= MAX_ADDRESSES) return [...keys];
      keys.add(key);
    }
  }
  return [...keys];
}

function keysOf(value: string): string[] {
  if (addressValueBreach(value) !== null) return [];
  // Plain addresses are most of what clients send, alone or listed: no parse for them.
  const plain = plainListKeys(value);
  if (plain !== null) return plain;
  const one = routingKeyOf(value);
  if (one !== null) return [one];
  const parsed = parseList(value);
  if (parsed === null) return [];
  return parsed
    .flatMap((entry) => (entry.type === 'group' ? entry.addresses : [entry]))
    .map((mailbox) => routingKeyOf(mailbox.address))
    .filter((key): key is string => key !== null);
}
