// Gate-rule patterns (SEMANTICS §4): parsed and normalized once when written, so that matching a
// routing key is a plain string comparison, and refused with a sentence that says how to fix them.
//
// `*` alone matches every routing key, so "allow *" admits any sender that has a key and "deny *"
// refuses every one. It never admits a run with no routing key: only an attachment with no rules
// does that (§5). Elsewhere `*` stands for one or more characters other than "@", so it can span
// dots: `mara@*.thescoop.com` matches `mara@eu.mail.thescoop.com`.
import { domainToASCII } from 'node:url';
import { codePointName, INVISIBLE_CHARACTER } from './invisible-characters';
import { MAX_ADDRESS_LENGTH, normalizeLocal, toAsciiDomain } from './routing-key';

export type PatternResult = { ok: true; pattern: string } | { ok: false; reason: string };

export type KeyMatcher = (key: string) => boolean;

export interface PatternLookup {
  by: 'key' | 'domain';
  value: string;
}

// Checking that a stored pattern is normalized costs an IDN conversion, and policies are compiled
// often from the same few patterns: the answer (a pure function of the text) is kept, bounded.
const MAX_COMPILED_PATTERNS = 10_000;
const compiledPatterns = new Map<string, KeyMatcher | null>();

const EXAMPLES = 'e.g. mara@thescoop.com, *@thescoop.com, or * alone for every sender';
const CONTROL = /\p{Cc}/u;
const WHITESPACE = /\s/u;
// RFC 5322 specials other than "@" and ".": they only appear in a quoted local part or around an
// address, so in a pattern they are almost always a pasted `<address>` or display name, which
// would never match.
const SPECIALS = /["<>(),;:\\[\]]/;
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

export function parsePattern(input: unknown): PatternResult {
  if (typeof input !== 'string') return refuse(`a pattern is a string (${EXAMPLES})`);
  if (input === '') return refuse(`the pattern is empty: write an address or a wildcard, ${EXAMPLES}`);
  if (input.length > MAX_ADDRESS_LENGTH) {
    return refuse(`the pattern is over ${MAX_ADDRESS_LENGTH} characters (${input.length}); no address is that long, so shorten it`);
  }
  if (CONTROL.test(input)) return refuse('the pattern contains a control character (such as a line break or NUL); retype it without one');
  const invisible = INVISIBLE_CHARACTER.exec(input);
  if (invisible !== null) {
    return refuse(
      `the pattern contains the invisible character ${codePointName(invisible[0])}; no routing key holds one (SEMANTICS §3), so retype the pattern without it`,
    );
  }
  if (WHITESPACE.test(input)) return refuse(`the pattern "${input}" contains whitespace; addresses have none, so remove the spaces`);
  const special = SPECIALS.exec(input);
  if (special !== null) {
    return refuse(
      `the pattern "${input}" contains ${special[0]}, which a pattern cannot hold; write the bare address, without quotes, brackets or a display name (IP address literals are not supported), ${EXAMPLES}`,
    );
  }
  const stars = count(input, '*');
  if (stars > 1) {
    return refuse(
      `the pattern "${input}" has more than one *; a pattern holds at most one wildcard, e.g. *@thescoop.com or mara@*.thescoop.com, so add one rule per pattern instead`,
    );
  }
  if (input === '*') return { ok: true, pattern: '*' };
  const ats = count(input, '@');
  if (ats === 0) return refuse(`the pattern "${input}" has no @; write local@domain, ${suggestionWithoutAt(input)}`);
  if (ats > 1) return refuse(`the pattern "${input}" has more than one @; write one address, local@domain, ${EXAMPLES}`);

  const at = input.indexOf('@');
  const rawLocal = input.slice(0, at);
  const rawDomain = input.slice(at + 1);
  if (rawLocal === '')
    return refuse(`the pattern "${input}" has nothing before the @; write a local part, or * for any, e.g. *@${rawDomain}`);
  if (rawDomain === '' || rawDomain === '.')
    return refuse(`the pattern "${input}" has nothing after the @; write a domain, e.g. ${rawLocal}@thescoop.com`);

  const local = normalizeLocal(rawLocal);
  if (local.includes('+')) return refuse(plusTagReason(input, local, rawDomain));

  const domain = normalizeDomain(rawDomain);
  if (!domain.ok) return domain;
  const pattern = `${local}@${domain.pattern}`;
  if (pattern.length > MAX_ADDRESS_LENGTH) {
    return refuse(`the pattern "${input}" is over ${MAX_ADDRESS_LENGTH} characters once its domain is converted to ASCII; shorten it`);
  }
  return { ok: true, pattern };
}

/**
 * A matcher for a pattern as stored, or null when the pattern is not exactly what parsePattern
 * writes: a stored pattern that was never normalized is not guessed at, its rule is broken (the
 * gate decides what a broken rule means, always by refusing).
 */
export function tryCompilePattern(pattern: string): KeyMatcher | null {
  const known = compiledPatterns.get(pattern);
  if (known !== undefined) return known;
  const matcher = compileUncached(pattern);
  if (compiledPatterns.size >= MAX_COMPILED_PATTERNS) compiledPatterns.clear();
  compiledPatterns.set(pattern, matcher);
  return matcher;
}

function compileUncached(pattern: string): KeyMatcher | null {
  const parsed = parsePattern(pattern);
  if (!parsed.ok || parsed.pattern !== pattern) return null;
  if (pattern === '*') return matchesEveryKey;
  const star = pattern.indexOf('*');
  if (star === -1) return (key) => key === pattern;
  const prefix = pattern.slice(0, star);
  const suffix = pattern.slice(star + 1);
  const shortest = prefix.length + suffix.length + 1;
  return (key) => {
    if (key.length < shortest || !key.startsWith(prefix) || !key.endsWith(suffix)) return false;
    // What the * covers must hold no "@".
    const at = key.indexOf('@', prefix.length);
    return at === -1 || at >= key.length - suffix.length;
  };
}

/** As tryCompilePattern, but a pattern that is not in normalized form throws. */
function compilePattern(pattern: string): KeyMatcher {
  const matcher = tryCompilePattern(pattern);
  if (matcher === null) {
    const parsed = parsePattern(pattern);
    const why = parsed.ok ? `it is not normalized; store "${parsed.pattern}" instead` : parsed.reason;
    throw new TypeError(`Cannot compile the pattern ${JSON.stringify(pattern)}: ${why}.`);
  }
  return matcher;
}

/**
 * How a normalized pattern can be looked up rather than tried: an exact pattern is the whole key,
 * and `*@domain` is the key's domain (its local part is anything without an "@"). Null otherwise.
 */
export function patternLookup(pattern: string): PatternLookup | null {
  const star = pattern.indexOf('*');
  if (star === -1) return { by: 'key', value: pattern };
  if (pattern.startsWith('*@')) return { by: 'domain', value: pattern.slice(2) };
  return null;
}

export function matchesPattern(pattern: string, routingKey: string): boolean {
  return compilePattern(pattern)(routingKey);
}

function matchesEveryKey(key: string): boolean {
  return key !== '';
}

function normalizeDomain(rawDomain: string): PatternResult {
  const labels = rawDomain.replace(/\.$/, '').split('.');
  if (labels.some((label) => label === '')) {
    return refuse(`the domain "${rawDomain}" has an empty label (two dots in a row, or a leading dot); remove the extra dot`);
  }
  if (!rawDomain.includes('*')) {
    const ascii = toAsciiDomain(rawDomain);
    return ascii === null ? refuse(unconvertible(rawDomain)) : { ok: true, pattern: ascii };
  }
  const starLabel = labels.find((label) => label.includes('*')) ?? '';
  if (!PRINTABLE_ASCII.test(starLabel)) {
    return refuse(
      `the domain label "${starLabel}" holds the * and other characters that are not ASCII; a label with * must be plain ASCII, so write the * in a label of its own, e.g. *.bücher.de`,
    );
  }
  // The conversion leaves an ASCII label as it is and lets a * through, but the host check refuses
  // the *: so the domain is checked with a plain letter in its place, and must convert alike.
  const checked = toAsciiDomain(rawDomain.replace('*', 'a'));
  const converted = domainToASCII(rawDomain).replace(/\.$/, '');
  if (checked === null || converted.replace('*', 'a') !== checked) return refuse(unconvertible(rawDomain));
  return { ok: true, pattern: converted };
}

function unconvertible(rawDomain: string): string {
  return `the domain "${rawDomain}" cannot be converted to ASCII as a host name: each label is letters, digits and inner hyphens, at most 63 characters once punycode (a Unicode label must stay Unicode: fullwidth letters are refused), 253 in all; check its spelling. IP addresses and [bracketed] literals are not supported`;
}

function plusTagReason(input: string, local: string, rawDomain: string): string {
  const untagged = local.slice(0, local.indexOf('+'));
  const instead = untagged === '' ? 'remove the +tag' : `write ${untagged}@${rawDomain} instead`;
  return `the pattern "${input}" has a +tag in its local part; senders are matched with their tag removed, so it could never match: ${instead}`;
}

function suggestionWithoutAt(input: string): string {
  if (input.startsWith('*') && input.length > 1) return `e.g. *@${input.slice(1).replace(/^\./, '')}`;
  return EXAMPLES;
}

function count(text: string, char: string): number {
  return text.split(char).length - 1;
}

function refuse(reason: string): PatternResult {
  return { ok: false, reason: `${reason[0]?.toUpperCase() ?? ''}${reason.slice(1)}.` };
}
