// A toolgate app over a fresh, migrated test database, with The Scoop's host tools, tokens for
// every role, and small request helpers. Each test file builds one in beforeAll.
import type { Express } from 'express';
import request from 'supertest';
import type { Sequelize } from 'sequelize';
import { createApp } from '../../src/app/app';
import { senderAsGiven } from '../../middleware/sender-check';
import { createSequelize } from '../../src/db/connect';
import { ensureScoopData } from '../../src/app/demo/scoop-data';
import { SCOOP_TOOLS } from '../../src/app/demo/scoop-tools';
import { createLogger } from '../../src/app/logger';
import { createToolgate, type Toolgate, type ToolgateOptions } from '../../src/toolgate';
import { createTestDatabase } from './database';

export const ADMIN_TOKEN = 'admin-token-0123456789abcdef';
export const SCHEDULER_TOKEN = 'scheduler-token-0123456789abcdef';
export const CLIENT_TOKEN = 'client-token-0123456789abcdef';

export interface TestApp {
  app: Express;
  tg: Toolgate;
  sequelize: Sequelize;
  /** The test database's URL, for a second instance on the same database. */
  databaseUrl: string;
  /** Admin-authenticated request builder. */
  admin: () => AuthedAgent;
  /** Client-authenticated (anonymous when the app was given clientTokens: [], e.g. with clientRoutes: 'open'). */
  client: () => AuthedAgent;
  scheduler: () => AuthedAgent;
  close(): Promise<void>;
}

type AuthedAgent = {
  get(url: string): request.Test;
  post(url: string): request.Test;
  put(url: string): request.Test;
  patch(url: string): request.Test;
  delete(url: string): request.Test;
};

function as(app: Express, token: string | null): AuthedAgent {
  const wrap = (t: request.Test) => (token ? t.set('Authorization', `Bearer ${token}`) : t);
  return {
    get: (url) => wrap(request(app).get(url)),
    post: (url) => wrap(request(app).post(url)),
    put: (url) => wrap(request(app).put(url)),
    patch: (url) => wrap(request(app).patch(url)),
    delete: (url) => wrap(request(app).delete(url)),
  };
}

/**
 * The tests write the senders they need into From, so they take senders as given, on purpose (no
 * warning); a test that gives authservId or a senderCheck of its own has that instead.
 */
function sendersOf(options: Partial<ToolgateOptions>): Partial<ToolgateOptions> {
  return options.authservId !== undefined || options.senderCheck !== undefined ? {} : { senderCheck: senderAsGiven };
}

/** Another instance of the service on a test app's database: its own pool, toolgate and cache. */
export async function createSecondInstance(first: TestApp, options: Partial<ToolgateOptions> = {}): Promise<Omit<TestApp, 'databaseUrl'>> {
  const sequelize = createSequelize(first.databaseUrl);
  const tg = createToolgate({
    sequelize,
    tools: SCOOP_TOOLS,
    adminToken: ADMIN_TOKEN,
    schedulerToken: SCHEDULER_TOKEN,
    clientTokens: [CLIENT_TOKEN],
    policyCache: 'listen',
    ...sendersOf(options),
    ...options,
  });
  const app = createApp(tg, { logger: createLogger(false) });
  return {
    app,
    tg,
    sequelize,
    admin: () => as(app, ADMIN_TOKEN),
    client: () => as(app, (options.clientTokens ?? [CLIENT_TOKEN])[0] ?? null),
    scheduler: () => as(app, SCHEDULER_TOKEN),
    close: async () => {
      await tg.close();
      await sequelize.close();
    },
  };
}

/**
 * Every test app caches compiled policies as the service does (listen mode), so the whole suite
 * checks that the cache never changes an answer; a test may pass another policyCache.
 */
export async function createTestApp(options: Partial<ToolgateOptions> & { sync?: boolean; dashboard?: boolean } = {}): Promise<TestApp> {
  const db = await createTestDatabase();
  const { sync = true, dashboard = false, ...overrides } = options;
  const tg = createToolgate({
    sequelize: db.sequelize,
    tools: SCOOP_TOOLS,
    adminToken: ADMIN_TOKEN,
    schedulerToken: SCHEDULER_TOKEN,
    clientTokens: [CLIENT_TOKEN],
    policyCache: 'listen',
    ...sendersOf(overrides),
    ...overrides,
  });
  await ensureScoopData(db.sequelize);
  if (sync) await tg.syncSystemToolkits();
  const app = createApp(tg, {
    logger: createLogger(false),
    ...(dashboard ? { dashboard: { adminToken: overrides.adminToken ?? ADMIN_TOKEN } } : {}),
  });
  return {
    app,
    tg,
    sequelize: db.sequelize,
    databaseUrl: db.url,
    admin: () => as(app, ADMIN_TOKEN),
    client: () => as(app, (overrides.clientTokens ?? [CLIENT_TOKEN])[0] ?? null),
    scheduler: () => as(app, SCHEDULER_TOKEN),
    close: async () => {
      await tg.close();
      await db.drop();
    },
  };
}
