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

/** A loopback name, any IP address, or one of `allowed` (lowercase host names, no port). */
export function isReachableHost(hostname: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (!hostname) return false;
  const host = bare(hostname);
  return isIP(host) !== 0 || isLoopbackHost(host) || allowed.has(host);
}
