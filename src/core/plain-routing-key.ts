// The routing key of a plain address without the RFC 5322 parser, which costs about 40 µs a call:
// `jane@acme.com`, `Mara+billing@TheScoop.com`, `Mara <mara@thescoop.com>`, `"Doe, Jane"
// <jane@acme.com>`. Anything else (escapes, comments, non-ASCII or invisible characters outside a
// quoted name, odd local-part characters, a trailing dot, an `xn--` label, a numeric last label) is
// not plain, and goes to the full parser. Where it answers, it answers exactly what
// routingKeyOf's full path does: a property test over generated and corpus addresses checks it.
//
// Why each limit keeps the answers equal:
// - local parts of letters, digits, `_`, `+`, `-` in dot-separated atoms: a dot-atom the parser
//   returns as written, so lowercasing and the tag cut are all that is left;
// - a display name of letters and digits (any script's: `Jöhn Dœ`, as RFC 6532 lets a phrase hold)
//   in words split by single spaces: a phrase the parser sets aside; so is a quoted name of printable ASCII, letters and digits without `"` or `\` (no
//   escapes), which mail clients write for names with commas or dots. Such words split by commas
//   and not quoted are a list whose first entry is no mailbox: the parser finds no key;
// - domains of LDH-ish labels whose last label starts with a letter: URL parsing neither reads them
//   as IPv4 nor decodes punycode (no `xn--`), so its conversion is lowercasing, and the host-name
//   checks below are routingKeyOf's.
//
// It runs on every gated request, so it tests with regular expressions that capture nothing and
// cuts with indexOf: no match arrays, and no key built when the address is its own key.

import { isHostName, MAX_ADDRESS_LENGTH, tagStripped } from './host-name';

const PLAIN_MAILBOX = /^[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*@(?:[A-Za-z0-9-]+\.)*[A-Za-z][A-Za-z0-9-]*$/;
const DISPLAY_NAME = /^[\p{L}\p{N}]+(?: [\p{L}\p{N}]+)*$/u;
const QUOTED_NAME = /^"[\x20\x21\x23-\x5B\x5D-\x7E\p{L}\p{N}]*"$/u;
const LISTED_NAME = /^[\p{L}\p{N}]+(?: [\p{L}\p{N}]+)*(?:, ?[\p{L}\p{N}]+(?: [\p{L}\p{N}]+)*)+$/u;
const GT = 0x3e;
const LT = 0x3c;
const QUOTE = 0x22;
const SPACE = 0x20;

/** The key of a plain address (null: it has none), or undefined when the address is not plain. */
export function plainRoutingKey(sender: string): string | null | undefined {
  let mailbox = sender;
  // `Name <mailbox>` or `"Name" <mailbox>`: the name must be plain too; the mailbox may not hold `<`
  // or `>` (below). A quoted name ends at its first `"`, since it holds no escape.
  if (sender.charCodeAt(sender.length - 1) === GT) {
    let open: number;
    if (sender.charCodeAt(0) === QUOTE) {
      open = sender.indexOf('"', 1) + 1;
      if (open === 0 || sender.charCodeAt(open) !== SPACE || sender.charCodeAt(open + 1) !== LT) return undefined;
      if (!QUOTED_NAME.test(sender.slice(0, open))) return undefined;
      mailbox = sender.slice(open + 2, -1);
    } else {
      open = sender.indexOf(' <');
      if (open === -1) return undefined;
      mailbox = sender.slice(open + 2, -1);
      if (!DISPLAY_NAME.test(sender.slice(0, open))) {
        return LISTED_NAME.test(sender.slice(0, open)) && PLAIN_MAILBOX.test(mailbox) ? null : undefined;
      }
    }
  }
  if (!PLAIN_MAILBOX.test(mailbox)) return undefined;
  const lower = mailbox.toLowerCase();
  const at = lower.indexOf('@');
  const domain = lower.slice(at + 1);
  if (domain.startsWith('xn--') || domain.includes('.xn--')) return undefined;
  if (!isHostName(domain)) return null;
  const plus = lower.indexOf('+');
  // No tag: the lowercased mailbox is the key as it stands.
  if (plus === -1 || plus > at) return lower.length > MAX_ADDRESS_LENGTH ? null : lower;
  const local = tagStripped(lower.slice(0, at));
  if (local === '') return null;
  const key = `${local}@${domain}`;
  return key.length > MAX_ADDRESS_LENGTH ? null : key;
}
