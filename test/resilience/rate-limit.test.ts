// clientRateLimit(): each caller's budget, counted apart per token (or IP), refused past it in the
// HTTP.md error shape, and off when configured off.
import express, { type Express } from 'express';
import type { AugmentedRequest } from 'express-rate-limit';
import request from 'supertest';
import { errorHandler } from '../../middleware/error-handler';
import { clientRateLimit, type ClientRateLimitOptions } from '../../middleware/rate-limit';
import { parseRateLimitSetting } from '../../src/rate-limit-options';
import { requestId } from '../../middleware/request-id';
import { ToolgateConfigError } from '../../src/errors';
import { createLogger } from '../../src/app/logger';

const LIMIT = 3;
const TOKEN_A = 'client-token-a-0123456789abcdef';
const TOKEN_B = 'client-token-b-0123456789abcdef';

function appWith(options: ClientRateLimitOptions | false): Express {
  const app = express();
  // Behind a proxy on loopback, so a test can speak for other client addresses.
  app.set('trust proxy', 'loopback');
  app.use(requestId());
  app.use(clientRateLimit(options));
  app.get('/x', (req, res) => {
    res.json({ key: (req as AugmentedRequest).rateLimit?.key ?? null });
  });
  app.use(errorHandler({ logger: createLogger(false), renderAll: true }));
  return app;
}

async function spend(app: Express, times: number, token?: string, ip?: string): Promise<request.Response[]> {
  const responses: request.Response[] = [];
  for (let i = 0; i < times; i++) {
    let r = request(app).get('/x');
    if (token) r = r.set('Authorization', `Bearer ${token}`);
    if (ip) r = r.set('X-Forwarded-For', ip);
    responses.push(await r);
  }
  return responses;
}

describe('when a caller goes over its budget', () => {
  test('then the request past the limit is a 429 rate_limited in the HTTP.md error shape', async () => {
    const app = appWith({ windowMs: 60_000, limit: LIMIT });
    const responses = await spend(app, LIMIT + 1, TOKEN_A);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    const refused = responses[LIMIT];
    expect(refused.body).toEqual({
      detail: expect.stringContaining('Too many requests'),
      code: 'rate_limited',
      request_id: refused.headers['x-request-id'],
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });

  test('then every answer carries the standard RateLimit headers with the budget left', async () => {
    const app = appWith({ windowMs: 60_000, limit: LIMIT });
    const [first] = await spend(app, 1, TOKEN_A);
    expect(first.headers['ratelimit-policy']).toMatch(/q=3; w=60/);
    expect(first.headers['ratelimit']).toMatch(/r=2; t=\d+/);
    expect(first.headers['x-ratelimit-limit']).toBeUndefined();
  });
});

describe('when several callers share the service', () => {
  test('then different tokens are counted apart', async () => {
    const app = appWith({ windowMs: 60_000, limit: LIMIT });
    await spend(app, LIMIT, TOKEN_A);
    const [b] = await spend(app, 1, TOKEN_B);
    const [a] = await spend(app, 1, TOKEN_A);
    expect({ a: a.status, b: b.status }).toEqual({ a: 429, b: 200 });
  });

  test('then a caller without a token is counted by IP, apart from token holders behind the same IP', async () => {
    const app = appWith({ windowMs: 60_000, limit: LIMIT });
    const anonymous = await spend(app, LIMIT + 1);
    const [withToken] = await spend(app, 1, TOKEN_A);
    expect({ anonymous: anonymous[LIMIT].status, withToken: withToken.status }).toEqual({ anonymous: 429, withToken: 200 });
  });

  test('then IPv6 callers in one /56 subnet share a budget and other subnets do not', async () => {
    const app = appWith({ windowMs: 60_000, limit: LIMIT });
    await spend(app, LIMIT, undefined, '2001:db8:aa:bb01::1');
    const [sameSubnet] = await spend(app, 1, undefined, '2001:db8:aa:bbff::2');
    const [otherSubnet] = await spend(app, 1, undefined, '2001:db8:ab:0::1');
    expect({ sameSubnet: sameSubnet.status, otherSubnet: otherSubnet.status }).toEqual({ sameSubnet: 429, otherSubnet: 200 });
  });

  test('then the bucket is keyed by a hash of the token, never the token itself', async () => {
    const app = appWith({ windowMs: 60_000, limit: LIMIT });
    const [res] = await spend(app, 1, TOKEN_A);
    expect(res.body.key).toMatch(/^token:[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(res.headers) + res.body.key).not.toContain(TOKEN_A);
  });
});

describe('when the limit is configured off', () => {
  test('then no request is refused and no RateLimit header is sent', async () => {
    const app = appWith(false);
    const responses = await spend(app, LIMIT + 5, TOKEN_A);
    expect(responses.every((r) => r.status === 200 && r.headers['ratelimit'] === undefined)).toBe(true);
  });
});

describe('when the options are not a budget', () => {
  test.each([
    ['a zero limit', { windowMs: 60_000, limit: 0 }, 'ERR_TOOLGATE_RATE_LIMIT_LIMIT'],
    ['a fractional limit', { windowMs: 60_000, limit: 1.5 }, 'ERR_TOOLGATE_RATE_LIMIT_LIMIT'],
    ['a missing limit', { windowMs: 60_000 }, 'ERR_TOOLGATE_RATE_LIMIT_LIMIT'],
    ['a negative window', { windowMs: -1, limit: 10 }, 'ERR_TOOLGATE_RATE_LIMIT_WINDOW'],
    ['a window in seconds by mistake', { windowMs: 60, limit: 10 }, 'ERR_TOOLGATE_RATE_LIMIT_WINDOW'],
    ['a window of NaN', { windowMs: Number.NaN, limit: 10 }, 'ERR_TOOLGATE_RATE_LIMIT_WINDOW'],
  ])('then %s throws a ToolgateConfigError at construction', (_name, options, code) => {
    let thrown: unknown;
    try {
      clientRateLimit(options as ClientRateLimitOptions);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ToolgateConfigError);
    expect((thrown as ToolgateConfigError).code).toBe(code);
  });
});

describe('when the limit is read from its setting text', () => {
  test.each([
    ['120/60s', { limit: 120, windowMs: 60_000 }],
    ['1000/1h', { limit: 1000, windowMs: 3_600_000 }],
    [' 5 / 2m ', { limit: 5, windowMs: 120_000 }],
    ['10/1500ms', { limit: 10, windowMs: 1_500 }],
    ['off', false],
    ['OFF', false],
  ])('then %j reads as %j', (text, expected) => {
    expect(parseRateLimitSetting(text)).toEqual(expected);
  });

  test.each([
    ['no window', '120', 'ERR_TOOLGATE_RATE_LIMIT_SETTING'],
    ['an unknown unit', '120/60d', 'ERR_TOOLGATE_RATE_LIMIT_SETTING'],
    ['an empty text', '', 'ERR_TOOLGATE_RATE_LIMIT_SETTING'],
    ['a zero budget', '0/60s', 'ERR_TOOLGATE_RATE_LIMIT_LIMIT'],
    ['a window under a second', '10/10ms', 'ERR_TOOLGATE_RATE_LIMIT_WINDOW'],
  ])('then %s throws a ToolgateConfigError', (_name, text, code) => {
    let thrown: unknown;
    try {
      parseRateLimitSetting(text);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ToolgateConfigError);
    expect((thrown as ToolgateConfigError).code).toBe(code);
  });
});
