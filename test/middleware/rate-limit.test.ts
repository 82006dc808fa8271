// clientRateLimit(): a budget per caller (the host's user, else a hash of the bearer token, else the
// address), in this process's memory here; over it, a 429 with Retry-After and nothing else runs.
import { clientRateLimit } from '../../middleware/rate-limit';
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

test("when roleOf named the caller, then its budget is the caller's, whatever token it comes with", async () => {
  const limit = clientRateLimit({ windowMs: 60_000, limit: 1 });
  const user = { auth: { role: 'client' as const, anonymousClient: false, source: 'roleOf' as const, caller: 'abc123' } };
  const first = await throughMiddleware(limit, { state: user, headers: { Authorization: `Bearer ${TOKEN}` } });
  const second = await throughMiddleware(limit, { state: user, headers: { Authorization: `Bearer ${TOKEN}-other` } });
  expect(first.passed).toBe(true);
  expect(second).toMatchObject({ status: 429, body: { code: 'rate_limited' } });
});
