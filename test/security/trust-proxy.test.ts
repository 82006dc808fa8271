// Behind a reverse proxy: with trust proxy set, the open client routes' rate limit counts anonymous
// callers by their own address (X-Forwarded-For); without it, by the connection's, so a forged
// header cannot buy a fresh budget. A bad setting fails when the app is built.
import request from 'supertest';
import { createApp } from '../../src/app/app';
import { readConfig } from '../../src/app/config';
import { ToolgateConfigError } from '../../src/errors';
import { createLogger } from '../../src/app/logger';
import { createToolgate, type Toolgate } from '../../src/toolgate';
import { createTestDatabase, type TestDatabase } from '../support/database';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
// Each toolgate built here is closed, so its policy listener is gone before the database is.
const built: Toolgate[] = [];
afterAll(async () => {
  for (const tg of built) await tg.close();
  await db.drop();
});

function appTrusting(trustProxy: false | string) {
  const tg = track(
    createToolgate({
      sequelize: db.sequelize,
      adminToken: 'admin-token-0123456789abcdef',
      clientRoutes: 'open',
      rateLimit: { windowMs: 60_000, limit: 2 },
    }),
  );
  return createApp(tg, { logger: createLogger(false), trustProxy });
}

function track(tg: Toolgate): Toolgate {
  built.push(tg);
  return tg;
}

const spend = (app: ReturnType<typeof appTrusting>, ip: string) => request(app).get('/api/agents').set('X-Forwarded-For', ip);

describe('when the service sits behind a trusted proxy on loopback', () => {
  test('then each forwarded client address has its own budget', async () => {
    const app = appTrusting('loopback');
    expect((await spend(app, '203.0.113.1')).status).toBe(200);
    expect((await spend(app, '203.0.113.1')).status).toBe(200);
    expect((await spend(app, '203.0.113.1')).status).toBe(429);
    expect((await spend(app, '203.0.113.2')).status).toBe(200);
  });
});

describe('when no proxy is trusted', () => {
  test('then X-Forwarded-For is ignored: a new forged address gets no new budget', async () => {
    const app = appTrusting(false);
    await spend(app, '198.51.100.1').expect(200);
    await spend(app, '198.51.100.2').expect(200);
    const res = await spend(app, '198.51.100.3').expect(429);
    expect(res.body.code).toBe('rate_limited');
  });
});

describe('when the setting is read', () => {
  test('then off, hop counts and address lists are understood', () => {
    expect(readConfig({}).trustProxy).toBe(false);
    expect(readConfig({ TOOLGATE_TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(readConfig({ TOOLGATE_TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toBe('loopback, 10.0.0.0/8');
  });

  test('then an address that is not one fails when the app is built', () => {
    const tg = track(createToolgate({ sequelize: db.sequelize, adminToken: 'admin-token-0123456789abcdef' }));
    expect(() => createApp(tg, { logger: createLogger(false), trustProxy: 'not-an-address' })).toThrow(ToolgateConfigError);
  });
});
