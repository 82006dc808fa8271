// A bearer token's SHA-256: what the API's auth and the dashboard's sign-in compare (in constant
// time, as equal-length digests) and what a rate-limit bucket is named by, so no token is kept.
import { createHash } from 'node:crypto';

export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
