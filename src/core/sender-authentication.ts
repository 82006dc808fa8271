// Decides whether a message's From counts as its sender (SEMANTICS §7): only when an
// Authentication-Results header stamped by the deployment's own receiving server vouches for it.
//
// Decisions where the contract is silent (docs/SECURITY.md, "Authenticated senders", says why):
// - The authserv-id matches up to ASCII case only, like the domain name it is (RFC 4343).
// - Every header bearing that id is read together: a server often adds one per milter.
// - `dmarc=pass` counts when its `header.from`, if given, is From's domain. Otherwise an SPF pass
//   (`smtp.mailfrom` only, never `smtp.helo`) or a DKIM pass (`header.d` only, never `header.i`)
//   counts when its domain equals From's domain: strict alignment, since without a public
//   suffix list a parent domain may be a shared platform signing for its tenants' subdomains.
// - `dmarc=fail` ends it: the receiving server applied the domain's own alignment mode, which an
//   SPF or DKIM pass read here must not overrule.
// - Ambiguity gives no key: two different DMARC results, a DMARC result about another From
//   domain, two different SPF results for From's domain, a header version other than 1, an
//   unreadable header that is or may be ours, a From with several mailboxes, over 64 headers.
import { z } from 'zod';
import { addressValueBreach } from './address-bounds';
import { parseList } from './address-parser';
import { asciiLower, parseAuthenticationResults, sameAuthservId, type AuthResult } from './authentication-results';
import { MAX_ADDRESS_LENGTH, routingKeyOf, splitAddress, toAsciiDomain } from './routing-key';

export const MAX_AUTHENTICATION_RESULTS_HEADERS = 64;

export const senderVerdictSchema = z.enum(['authenticated', 'unauthenticated', 'ambiguous', 'no_sender']);
export type SenderVerdict = z.infer<typeof senderVerdictSchema>;

export interface SenderAuthentication {
  /** Set only when the verdict is `authenticated`. */
  routing_key: string | null;
  verdict: SenderVerdict;
  reason: string;
}

export interface SenderAuthenticationInput {
  from: string | null | undefined;
  /** The raw value of each Authentication-Results header, without the field name. */
  authenticationResults: readonly string[];
  /** The authserv-id of the deployment's own receiving mail server. */
  authservId: string;
}

// What an operator may configure: an RFC 2045 token, which every real authserv-id is.
const AUTHSERV_ID = /^[!#$%&'*+\-.0-9A-Z^_`a-z{|}~]{1,255}$/;
// The registered DMARC results that give no verdict; with pass and fail, the only ones understood.
const DMARC_NOT_EVALUATED = new Set(['none', 'temperror', 'permerror']);
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/** Whether `id` can be configured as the authserv-id to trust. */
export function isValidAuthservId(id: unknown): id is string {
  return typeof id === 'string' && AUTHSERV_ID.test(id);
}

export function authenticatedRoutingKey(input: SenderAuthenticationInput): SenderAuthentication {
  const { from, authenticationResults, authservId } = input;
  if (!isValidAuthservId(authservId)) return unauthenticated('no valid authserv-id is configured, so no header can vouch for the sender');
  const key = typeof from === 'string' ? routingKeyOf(from) : null;
  const fromDomain = key === null ? null : (splitAddress(key)?.domain ?? null);
  if (key === null || fromDomain === null) {
    return typeof from === 'string' && namesSeveralMailboxes(from)
      ? ambiguous('From names several mailboxes or a group')
      : { routing_key: null, verdict: 'no_sender', reason: 'From has no routing key' };
  }

  const ours = ourResults(authenticationResults, authservId);
  if (!ours.ok) return ambiguous(ours.reason);
  if (ours.headers === 0) return unauthenticated(`no Authentication-Results header from ${authservId}`);
  return verdictOf(ours.results, key, fromDomain);
}

type OurResults = { ok: true; headers: number; results: AuthResult[] } | { ok: false; reason: string };

function ourResults(values: readonly unknown[], authservId: string): OurResults {
  if (!Array.isArray(values)) return { ok: false, reason: 'the Authentication-Results values are not a list' };
  if (values.length > MAX_AUTHENTICATION_RESULTS_HEADERS) {
    return { ok: false, reason: `over ${MAX_AUTHENTICATION_RESULTS_HEADERS} Authentication-Results headers` };
  }
  let headers = 0;
  const results: AuthResult[] = [];
  for (const value of values) {
    if (typeof value !== 'string') return { ok: false, reason: 'an Authentication-Results value is not a string' };
    const parsed = parseAuthenticationResults(value);
    if (!parsed.ok) {
      // Ignoring an unreadable header of our own could hide a fail, so one that claims our id, or
      // mentions it anywhere (`Authentication-Results: mx...` pasted with its field name), is ours.
      const mayBeOurs =
        (parsed.authserv_id !== undefined && sameAuthservId(parsed.authserv_id, authservId)) ||
        asciiLower(value).includes(asciiLower(authservId));
      if (mayBeOurs)
        return {
          ok: false,
          reason: `an Authentication-Results header that is or may be from ${authservId} cannot be read: ${parsed.reason}`,
        };
      continue;
    }
    if (!sameAuthservId(parsed.header.authserv_id, authservId)) continue;
    if (parsed.header.version !== undefined && parsed.header.version !== 1) {
      return { ok: false, reason: `the header from ${authservId} has version ${parsed.header.version}, not 1` };
    }
    headers++;
    for (const result of parsed.header.results) {
      if (result.method_version !== undefined && result.method_version !== 1) {
        return { ok: false, reason: `${result.method}/${result.method_version} is not version 1` };
      }
      results.push(result);
    }
  }
  return { ok: true, headers, results };
}

function verdictOf(results: readonly AuthResult[], key: string, fromDomain: string): SenderAuthentication {
  const dmarc = results.filter((r) => r.method === 'dmarc');
  const dmarcResults = new Set(dmarc.map((r) => r.result));
  if (dmarcResults.size > 1) return ambiguous(`the DMARC results disagree (${[...dmarcResults].map((r) => `dmarc=${r}`).join(', ')})`);
  for (const r of dmarc) {
    const headerFrom = r.properties['header.from'];
    if (headerFrom !== undefined && authenticatedDomain(headerFrom) !== fromDomain) {
      return ambiguous(`dmarc=${r.result} is about header.from=${headerFrom}, not From's domain ${fromDomain}`);
    }
  }
  const dmarcResult = dmarc[0]?.result;
  if (dmarcResult === 'pass') {
    // DMARC evaluates one domain, and a pass that does not name it (header.from) proves nothing
    // about this message's From: the server may have evaluated another header, or another message.
    if (!dmarc.some((r) => r.properties['header.from'] !== undefined))
      return unauthenticated("dmarc=pass names no header.from, so it says nothing of From's domain");
    return authenticated(key, `dmarc=pass for ${fromDomain}`);
  }
  if (dmarcResult === 'fail') return unauthenticated(`dmarc=fail for ${fromDomain}`);
  if (dmarcResult !== undefined && !DMARC_NOT_EVALUATED.has(dmarcResult))
    return ambiguous(`dmarc=${dmarcResult} is not a DMARC result this service understands`);

  const spfResults = new Set(
    results.filter((r) => r.method === 'spf' && authenticatedDomain(r.properties['smtp.mailfrom']) === fromDomain).map((r) => r.result),
  );
  if (spfResults.size > 1)
    return ambiguous(`the SPF results for ${fromDomain} disagree (${[...spfResults].map((r) => `spf=${r}`).join(', ')})`);
  if (spfResults.has('pass')) return authenticated(key, `spf=pass for smtp.mailfrom in ${fromDomain}`);
  const dkimPass = results.some(
    (r) => r.method === 'dkim' && r.result === 'pass' && authenticatedDomain(r.properties['header.d']) === fromDomain,
  );
  if (dkimPass) return authenticated(key, `dkim=pass for header.d=${fromDomain}`);
  return unauthenticated(`no dmarc=pass, and no SPF or DKIM pass for From's domain ${fromDomain}`);
}

/**
 * The domain a property names (`mara@thescoop.com` or `thescoop.com`), lowercase with one trailing
 * dot dropped; null unless it is printable ASCII host labels. A U-label is refused rather than
 * mapped, so no Unicode look-alike is ever folded onto an ASCII domain.
 */
function authenticatedDomain(value: string | undefined): string | null {
  if (value === undefined || !PRINTABLE_ASCII.test(value)) return null;
  const domain = value.slice(value.lastIndexOf('@') + 1);
  if (domain === '') return null;
  return toAsciiDomain(asciiLower(domain));
}

function namesSeveralMailboxes(from: string): boolean {
  // Past the address limit there is no key either way; the list parser need not see it.
  if (from.length > MAX_ADDRESS_LENGTH || addressValueBreach(from) !== null) return false;
  const list = parseList(from);
  return list !== null && (list.length > 1 || list.some((a) => a.type === 'group'));
}

function authenticated(key: string, reason: string): SenderAuthentication {
  return { routing_key: key, verdict: 'authenticated', reason };
}

function unauthenticated(reason: string): SenderAuthentication {
  return { routing_key: null, verdict: 'unauthenticated', reason };
}

function ambiguous(reason: string): SenderAuthentication {
  return { routing_key: null, verdict: 'ambiguous', reason };
}
