// The routing keys of the addresses a message names in To, Cc or Reply-To (SEMANTICS §11): every
// mailbox of an RFC 5322 address list (a group's members included), each reduced as a sender is
// (§3). Values the parser cannot read, and mailboxes with no key, add nothing.
import { parseAddressList } from 'email-addresses';
import { routingKeyOf } from './routing-key';

/** Past this, a header's addresses are not read: no real conversation holds more. */
const MAX_ADDRESSES = 500;

export function routingKeysOf(values: string | readonly string[] | undefined): string[] {
  if (values === undefined) return [];
  const keys = new Set<string>();
  for (const value of typeof values === 'string' ? [values] : values) {
    for (const key of keysOf(value)) {
      if (keys.size >= MAX_ADDRESSES) return [...keys];
      keys.add(key);
    }
  }
  return [...keys];
}

function keysOf(value: string): string[] {
  // One mailbox is most of what clients send: no list parse for it.
  const one = routingKeyOf(value);
  if (one !== null) return [one];
  const parsed = parseAddressList({ input: value, rfc6532: true });
  if (parsed === null) return [];
  return parsed
    .flatMap((entry) => (entry.type === 'group' ? entry.addresses : [entry]))
    .map((mailbox) => routingKeyOf(mailbox.address))
    .filter((key): key is string => key !== null);
}
