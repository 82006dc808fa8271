// Which Host names reach this service, one rule for the dashboard's secure context and for the open
// API's guard against DNS rebinding: a web page can point a name of its own at 127.0.0.1, but it
// cannot make a browser send a loopback name or an IP address as the Host of its requests.
import { isIP } from 'node:net';

/** A Host as Express reads it (`[::1]`, `LocalHost`), lowercase and without IPv6 brackets. */
function bare(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/** A connection from this machine: 127.0.0.0/8 (IPv4-mapped too) or ::1. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return address === '::1';
}

/** A name browsers resolve to this machine themselves (never through DNS), or a loopback address. */
export function isLoopbackHost(hostname: string | undefined): boolean {
  if (!hostname) return false;
  const host = bare(hostname);
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

/** The name in a Host header's value, without its port: `[::1]:3000` → `::1`, `LocalHost:3000` → `localhost`. */
export function hostOfHeader(value: string): string {
  const v = value.trim().toLowerCase();
  if (v.startsWith('[')) {
    const end = v.indexOf(']');
    return end < 0 ? v : v.slice(1, end);
  }
  const colon = v.indexOf(':');
  return colon < 0 ? v : v.slice(0, colon);
}

/**
 * The first name a request was sent to that is not reachable, or null: its Host header as the
 * client sent it, and every name in X-Forwarded-Host. Not Express's req.hostname, which a trusted
 * proxy setting takes from X-Forwarded-Host alone, and which a page's own fetch() may set.
 */
export function unreachableHostOf(headers: { host?: string; forwardedHost?: string }, allowed: ReadonlySet<string>): string | null {
  const names = [headers.host ?? '', ...(headers.forwardedHost === undefined ? [] : headers.forwardedHost.split(','))];
  for (const name of names) {
    if (!isReachableHost(hostOfHeader(name), allowed)) return name.trim();
  }
  return null;
}

/** A loopback name, any IP address, or one of `allowed` (lowercase host names, no port). */
export function isReachableHost(hostname: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (!hostname) return false;
  const host = bare(hostname);
  return isIP(host) !== 0 || isLoopbackHost(host) || allowed.has(host);
}
