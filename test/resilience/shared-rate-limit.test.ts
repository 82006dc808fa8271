// The client rate limit is counted in PostgreSQL: two instances on one database share one caller's
// budget, so N instances behind a load balancer do not give a caller N budgets. The memory store,
// when asked for, keeps the per-process count.
import request from 'supertest';
import { tokenDigest } from '../../src/core/token-digest';
import { CLIENT_TOKEN, createSecondInstance, createTestApp, type TestApp } from '../support/app';

const LIMIT = 4;
let a: TestApp;
let b: Awaited<ReturnType<typeof createSecondInstance>>;

beforeAll(async () => {
  a = await createTestApp({ rateLimit: { windowMs: 60_000, limit: LIMIT } });
  b = await createSecondInstance(a, { rateLimit: { windowMs: 60_000, limit: LIMIT } });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

describe('when one caller spreads its requests over two instances on one database', () => {
  test('then the request past its one budget is refused, whichever instance serves it', async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= LIMIT; i++) {
      const instance = i % 2 === 0 ? a : b;
      statuses.push((await instance.client().get('/api/agents')).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    const refused = await b.client().get('/api/agents').expect(429);
    expect(refused.body.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });

  test('then another caller still has its own budget', async () => {
    const other = await createSecondInstance(a, {
      rateLimit: { windowMs: 60_000, limit: LIMIT },
      clientTokens: [CLIENT_TOKEN, 'other-client-0123456789abcdef'],
    });
    try {
      await request(other.app).get('/api/agents').set('Authorization', 'Bearer other-client-0123456789abcdef').expect(200);
    } finally {
      await other.close();
    }
  });

  test('then the counts live in toolgate_rate_limits, keyed by a hash of the token', async () => {
    const [rows] = await a.sequelize.query('SELECT key, points FROM toolgate_rate_limits');
    const keys = (rows as { key: string; points: number }[]).map((r) => r.key);
    expect(keys.some((k) => k.startsWith('client:token:'))).toBe(true);
    expect(keys.join(' ')).not.toContain(CLIENT_TOKEN);
  });
});

describe('when the memory store is asked for', () => {
  test('then each instance counts on its own', async () => {
    const m1 = await createSecondInstance(a, {
      rateLimit: { windowMs: 60_000, limit: 1, store: 'memory' },
      clientTokens: ['memory-client-0123456789abcdef'],
    });
    const m2 = await createSecondInstance(a, {
      rateLimit: { windowMs: 60_000, limit: 1, store: 'memory' },
      clientTokens: ['memory-client-0123456789abcdef'],
    });
    try {
      const call = (app: typeof m1.app) => request(app).get('/api/agents').set('Authorization', 'Bearer memory-client-0123456789abcdef');
      expect([(await call(m1.app)).status, (await call(m2.app)).status, (await call(m1.app)).status]).toEqual([200, 200, 429]);
    } finally {
      await m1.close();
      await m2.close();
    }
  });
});

describe('when a caller is far from its limit', () => {
  const TOKEN = 'far-from-limit-0123456789abcdef';
  const WIDE = 64;
  let wide: Awaited<ReturnType<typeof createSecondInstance>>;
  beforeAll(async () => {
    wide = await createSecondInstance(a, { rateLimit: { windowMs: 60_000, limit: WIDE }, clientTokens: [TOKEN] });
  });
  afterAll(async () => {
    await wide?.close();
  });
  const call = () => request(wide.app).get('/api/agents').set('Authorization', `Bearer ${TOKEN}`);

  test('then one instance still refuses the first request past the limit, and every request it let through is counted in PostgreSQL', async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= WIDE; i++) statuses.push((await call()).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(WIDE);
    expect(statuses.at(-1)).toBe(429);
    // Held hits are written within a flush.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [rows] = await a.sequelize.query('SELECT points FROM toolgate_rate_limits WHERE key = :key', {
      replacements: { key: `client:token:${tokenDigest(TOKEN).toString('base64url')}` },
    });
    expect((rows as { points: number }[])[0]!.points).toBe(WIDE + 1);
  });
});
