// The routing key of a plain address without the RFC 5322 parser, which costs about 30 µs a call:
// `jane@acme.com`, `Mara+billing@TheScoop.com`, `Mara <mara@thescoop.com>`. Anything else (quotes,
// comments, non-ASCII, odd local-part characters, a trailing dot, an `xn--` label, a numeric last
// label) is not plain, and goes to the full parser. Where it answers, it answers exactly what
// routingKeyOf's full path does: a property test over generated and corpus addresses checks it.
//
// Why each limit keeps the answers equal:
// - local parts of letters, digits, `_`, `+`, `-` in dot-separated atoms: a dot-atom the parser
//   returns as written, so lowercasing and the tag cut are all that is left;
// - a display name of letters and digits in words split by single spaces: a phrase the parser sets
//   aside;
// - domains of LDH-ish labels whose last label starts with a letter: URL parsing neither reads them
//   as IPv4 nor decodes punycode (no `xn--`), so its conversion is lowercasing, and the host-name
//   checks below are routingKeyOf's.

import { isHostName, MAX_ADDRESS_LENGTH, tagStripped } from './host-name';

const PLAIN_ADDRESS = /^(?:[A-Za-z0-9]+(?: [A-Za-z0-9]+)* <([A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*)@((?:[A-Za-z0-9-]+\.)*[A-Za-z][A-Za-z0-9-]*)>|([A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*)@((?:[A-Za-z0-9-]+\.)*[A-Za-z][A-Za-z0-9-]*))$/;
const PUNYCODE_LABEL = /(?:^|\.)xn--/i;

/** The key of a plain address (null: it has none), or undefined when the address is not plain. */
export function plainRoutingKey(sender: string): string | null | undefined {
  const match = PLAIN_ADDRESS.exec(sender);
  if (match === null) return undefined;
  const rawLocal = match[1] ?? match[3] ?? '';
  const rawDomain = match[2] ?? match[4] ?? '';
  if (PUNYCODE_LABEL.test(rawDomain)) return undefined;
  const local = tagStripped(rawLocal).toLowerCase();
  if (local === '') return null;
  const domain = rawDomain.toLowerCase();
  if (!isHostName(domain)) return null;
  const key = `${local}@${domain}`;
  return key.length > MAX_ADDRESS_LENGTH ? null : key;
}
