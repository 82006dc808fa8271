// clientRateLimit(): a budget per caller (the host's user, else a hash of the bearer token, else the
// address), in this process's memory here; over it, a 429 with Retry-After and nothing else runs.
import type { Request } from 'express';
import { callerKey, clientRateLimit } from '../../middleware/rate-limit';
import { throughMiddleware } from '../support/middleware-harness';

const TOKEN = 'client-token-0123456789abcdef012345678';

test('when a caller spends its budget, then the next request is a 429 rate_limited with Retry-After, and another caller is not counted', async () => {
  const limit = clientRateLimit({ windowMs: 60_000, limit: 2 });
  const as = (token: string) => throughMiddleware(limit, { headers: { Authorization: `Bearer ${token}` } });
  expect((await as(TOKEN)).passed).toBe(true);
  expect((await as(TOKEN)).passed).toBe(true);
  const over = await as(TOKEN);
  expect(over).toMatchObject({ status: 429, passed: false, body: { code: 'rate_limited' } });
  expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
  expect((await as(`${TOKEN}-other`)).passed).toBe(true);
});

test('when the budget is off, then every request passes', async () => {
  const off = clientRateLimit(false);
  for (let i = 0; i < 5; i++) expect((await throughMiddleware(off)).passed).toBe(true);
});

test("when roleOf named the caller, then its budget is the caller's, whatever token or address it comes with; a token is kept only as a hash", () => {
  const request = (auth: object | undefined, authorization?: string) =>
    ({ res: { locals: { toolgate: { auth } } }, get: () => authorization, ip: '203.0.113.7', socket: {} }) as unknown as Request;
  const user = { role: 'client', anonymousClient: false, source: 'roleOf', caller: 'abc123' };
  expect(callerKey(request(user, `Bearer ${TOKEN}`))).toBe('caller:abc123');
  const byToken = callerKey(request(undefined, `Bearer ${TOKEN}`));
  expect(byToken).toMatch(/^token:/);
  expect(byToken).not.toContain(TOKEN);
  expect(callerKey(request(undefined))).toBe('ip:203.0.113.7');
});
