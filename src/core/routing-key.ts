// Reduces a sender to the routing key every gate rule is matched against (SEMANTICS §3), or to
// null when the value does not name exactly one mailbox we can compare safely.
//
// Decisions where the contract is silent:
// - TAB is accepted in the raw value: it is folding whitespace in an unfolded From header and the
//   parser treats it as a space. Every other C0 control, DEL and the C1 controls give no key.
// - The 320-character limit counts UTF-16 code units, so it is never more lenient than a count of
//   characters.
// - A quoted local part that still holds whitespace, "@" or a control character once unquoted
//   (`"a@evil.com"@acme.com`) gives no key: no pattern can name it and it reads as another address.
// - The local part is put in Unicode NFC before lowercasing (RFC 6532 §3.1), so two spellings of
//   the same UTF-8 address share a key.
// - The domain must come out of the ASCII conversion as plain host labels: IP literals, and the
//   numeric hosts that URL parsing would rewrite as IPv4 addresses, give no key.
import { parseOneAddress } from 'email-addresses';
import { domainToASCII } from 'node:url';

export const MAX_ADDRESS_LENGTH = 320;

const FORBIDDEN_CONTROL = /[\u0000-\u0008\u000A-\u001F\u007F-\u009F]/u;
const UNSAFE_IN_LOCAL = /[@\s\u0000-\u001F\u007F-\u009F]/u;
const ASCII_HOST = /^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$/;
const NUMERIC_LABEL = /^[0-9]+$/;
// The parser refuses `a@b.com.` and `Name <a@b.com.>`: find that one trailing dot, right after a
// domain character and before an optional closing bracket, so it can be set aside before parsing.
const TRAILING_DOMAIN_DOT = /(?<=[^\s.@<>[\]()"\\])\.(?=\s*>?\s*$)/u;

export function routingKeyOf(sender: string | null | undefined): string | null {
  if (typeof sender !== 'string' || sender.trim() === '') return null;
  if (sender.length > MAX_ADDRESS_LENGTH || FORBIDDEN_CONTROL.test(sender)) return null;
  const mailbox = parseMailbox(sender);
  if (mailbox === null) return null;
  const local = tagStripped(normalizeLocal(mailbox.local));
  if (local === '' || UNSAFE_IN_LOCAL.test(local)) return null;
  // The dot set aside for the parser is put back so that exactly one trailing dot is dropped, after
  // the conversion, which also turns an ideographic full stop into one.
  const domain = toAsciiDomain(mailbox.domain + (mailbox.hadTrailingDot ? '.' : ''));
  if (domain === null) return null;
  return `${local}@${domain}`;
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

/** The local part cut at its first "+": `mara+billing` → `mara`. */
export function tagStripped(local: string): string {
  const plus = local.indexOf('+');
  return plus === -1 ? local : local.slice(0, plus);
}

/**
 * The domain in lowercase ASCII A-labels with one trailing dot dropped (`bücher.de.` →
 * `xn--bcher-kva.de`), or null when it does not convert to plain host labels.
 */
export function toAsciiDomain(domain: string): string | null {
  const converted = domainToASCII(domain);
  const ascii = converted.endsWith('.') ? converted.slice(0, -1) : converted;
  if (!ASCII_HOST.test(ascii)) return null;
  const labels = ascii.split('.');
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
  if (!TRAILING_DOMAIN_DOT.test(input)) return null;
  const retried = parseOne(input.replace(TRAILING_DOMAIN_DOT, ''));
  return retried === null ? null : { ...retried, hadTrailingDot: true };
}

function parseOne(input: string): { local: string; domain: string } | null {
  // parseOneAddress answers null for several mailboxes and a group for a group: neither is a sender.
  const parsed = parseOneAddress({ input, rfc6532: true });
  if (parsed === null || parsed.type !== 'mailbox') return null;
  return { local: parsed.local, domain: parsed.domain };
}
