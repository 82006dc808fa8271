// Reduces a sender to the routing key every gate rule is matched against (SEMANTICS §3), or to
// null when the value does not name exactly one mailbox we can compare safely.
//
// Decisions where the contract is silent:
// - TAB is accepted in the raw value: it is folding whitespace in an unfolded From header and the
//   parser treats it as a space. Every other C0 control, DEL and the C1 controls give no key.
// - The 320-character limit counts UTF-16 code units, so it is never more lenient than a count of
//   characters. It holds for the raw value and again for the key, which can grow: a Unicode domain
//   gets longer as punycode (`é.` is `xn--9ca.`).
// - A quoted local part that still holds whitespace, "@" or a control character once unquoted
//   (`"a@evil.com"@acme.com`) gives no key: no pattern can name it and it reads as another address.
// - The mailbox as written (the local part and the domain, comments within them included; not the
//   display name, which is dropped) may hold no invisible character (invisible-characters.ts): the
//   parser reads U+FEFF, U+00A0, U+3000 and U+2028 as whitespace and drops them, so the key folded
//   onto the ASCII name, and U+202E in a local part makes `\u202emoc.poocseht@aram` read as
//   mara@thescoop.com wherever the key is shown. Such a sender has no key.
// - The local part is put in Unicode NFC before lowercasing (RFC 6532 §3.1), so two spellings of
//   the same UTF-8 address share a key.
// - The domain must be a host name, in ASCII (A-label) form: labels of letters, digits and inner
//   hyphens, 1 to 63 characters each, 253 in all. IP literals, underscores, a label that starts or
//   ends with "-", and the numeric hosts that URL parsing would rewrite as IPv4 give no key.
// - The key is the address's own mailbox or nothing. The IDN conversion is the URL parser's, which
//   also percent-decodes and stops at "/", "?" or "#" (`a@thescoop.com/evil.org` would read as
//   thescoop.com): so only letters, digits, "-", "." and non-ASCII characters reach it, each label
//   must stay one label (IDNA maps "⒈" to "1."), and a non-ASCII label must stay non-ASCII (a
//   fullwidth ＴＨＥＳＣＯＯＰ, or a soft hyphen inside thescoop, folds onto the ASCII name).
// - Comments nested more than 3 deep, or more than 16 comments, give no key: the parser's cost
//   grows with them (SEMANTICS §12b), and no mail client writes them.
import { domainToASCII } from 'node:url';
import { addressValueBreach } from './address-bounds';
import { parseOne as parseAddress } from './address-parser';
import { isHostName, MAX_ADDRESS_LENGTH, tagStripped } from './host-name';
import { INVISIBLE_CHARACTER } from './invisible-characters';
import { plainRoutingKey } from './plain-routing-key';

export { MAX_ADDRESS_LENGTH, tagStripped };

const FORBIDDEN_CONTROL = /[\u0000-\u0008\u000A-\u001F\u007F-\u009F]/u;
const UNSAFE_IN_LOCAL = /[@\s\u0000-\u001F\u007F-\u009F]/u;
const NUMERIC_LABEL = /^[0-9]+$/;
// Every ASCII character but letters, digits, "-" and ".": none may reach the URL parser.
const ASCII_OUTSIDE_HOST_NAMES = /[\u0000-\u002C\u002F\u003A-\u0040\u005B-\u0060\u007B-\u007F]/;
const NON_ASCII = /[^\u0000-\u007F]/;
// Lower-case letters, digits, "-" and ".", the last label starting with a letter, so never a number
// the URL parser would read as an IPv4 address (`10`, `0x1f`).
const PLAIN_LOWER_HOST = /^(?:[a-z0-9-]*\.)*[a-z][a-z0-9-]*\.?$/;
// What IDNA takes as the dot between labels: the full stop and its ideographic and fullwidth forms.
const LABEL_SEPARATOR = /[.\u3002\uFF0E\uFF61]/u;
// What may not stand right before the trailing domain dot set aside below (whitespace aside).
const NOT_BEFORE_DOT = /[.@<>[\]()"\\]/;
const SPACE = /\s/u;

export function routingKeyOf(sender: string | null | undefined): string | null {
  if (typeof sender !== 'string' || sender.trim() === '') return null;
  if (sender.length > MAX_ADDRESS_LENGTH) return null;
  // Most senders are plain addresses: answered without the parser, with the parser's answer.
  const plain = plainRoutingKey(sender);
  if (plain !== undefined) return plain;
  return parsedRoutingKey(sender);
}

/** routingKeyOf through the RFC 5322 parser: every sender, plain or not (and the fast path's reference). */
export function parsedRoutingKey(sender: string): string | null {
  if (sender.trim() === '' || sender.length > MAX_ADDRESS_LENGTH || FORBIDDEN_CONTROL.test(sender)) return null;
  // Past the parser's bounds (SEMANTICS §12b) no real client writes: not parsed, so no key.
  if (addressValueBreach(sender) !== null) return null;
  const mailbox = parseMailbox(sender);
  if (mailbox === null) return null;
  const local = tagStripped(normalizeLocal(mailbox.local));
  if (local === '' || UNSAFE_IN_LOCAL.test(local)) return null;
  // The dot set aside for the parser is put back so that exactly one trailing dot is dropped, after
  // the conversion, which also turns an ideographic full stop into one.
  const domain = toAsciiDomain(mailbox.domain + (mailbox.hadTrailingDot ? '.' : ''));
  if (domain === null) return null;
  const key = `${local}@${domain}`;
  return key.length > MAX_ADDRESS_LENGTH ? null : key;
}

/** A routing key's two halves, split at its only "@"; null for anything that is not a key. */
export function splitAddress(key: string): { local: string; domain: string } | null {
  const at = key.indexOf('@');
  if (at <= 0 || at === key.length - 1 || key.indexOf('@', at + 1) !== -1) return null;
  return { local: key.slice(0, at), domain: key.slice(at + 1) };
}

/** Lowercased and in NFC: the form local parts are compared in, for keys and patterns alike. */
export function normalizeLocal(local: string): string {
  return local.normalize('NFC').toLowerCase().normalize('NFC');
}

/**
 * The domain in lowercase ASCII A-labels with one trailing dot dropped (`bücher.de.` →
 * `xn--bcher-kva.de`), or null when it is not a host name whose every label converts to one label.
 */
export function toAsciiDomain(domain: string): string | null {
  if (ASCII_OUTSIDE_HOST_NAMES.test(domain)) return null;
  const written = domain.split(LABEL_SEPARATOR);
  if (written.length > 1 && written[written.length - 1] === '') written.pop();
  // A name as most are written (PLAIN_LOWER_HOST, no A-label to check) is its own ASCII form; the
  // URL parser's conversion is the costly part of reading a sender.
  const converted = PLAIN_LOWER_HOST.test(domain) && !domain.includes('xn--') ? domain : domainToASCII(domain);
  const ascii = converted.endsWith('.') ? converted.slice(0, -1) : converted;
  if (!isHostName(ascii)) return null;
  const labels = ascii.split('.');
  if (labels.length !== written.length) return null;
  for (let i = 0; i < labels.length; i++) {
    if (NON_ASCII.test(written[i] ?? '') && !(labels[i] ?? '').startsWith('xn--')) return null;
  }
  if (NUMERIC_LABEL.test(labels[labels.length - 1] ?? '')) return null;
  return ascii;
}

interface Mailbox {
  local: string;
  domain: string;
  hadTrailingDot: boolean;
}

function parseMailbox(input: string): Mailbox | null {
  const direct = parseOne(input);
  if (direct !== null) return { ...direct, hadTrailingDot: false };
  const dot = trailingDomainDot(input);
  if (dot === -1) return null;
  const retried = parseOne(input.slice(0, dot) + input.slice(dot + 1));
  return retried === null ? null : { ...retried, hadTrailingDot: true };
}

function parseOne(input: string): { local: string; domain: string } | null {
  // parseOneAddress answers null for several mailboxes and a group for a group: neither is a sender.
  const parsed = parseAddress(input);
  if (parsed === null || parsed.type !== 'mailbox') return null;
  // Checked as written: the parsed local part and domain have already lost what it read as whitespace.
  if (INVISIBLE_CHARACTER.test(parsed.parts.address.tokens)) return null;
  return { local: parsed.local, domain: parsed.domain };
}

/**
 * The parser refuses `a@b.com.` and `Name <a@b.com.>`: where that one trailing dot is, right after
 * a domain character and before an optional closing bracket and spaces, so it can be set aside
 * before parsing; -1 when there is none. A scan from the end, so its cost is the length at most.
 */
function trailingDomainDot(input: string): number {
  let i = input.length - 1;
  while (i >= 0 && SPACE.test(input[i]!)) i--;
  if (i >= 0 && input[i] === '>') {
    i--;
    while (i >= 0 && SPACE.test(input[i]!)) i--;
  }
  if (i < 1 || input[i] !== '.') return -1;
  const before = input[i - 1]!;
  return SPACE.test(before) || NOT_BEFORE_DOT.test(before) ? -1 : i;
}
