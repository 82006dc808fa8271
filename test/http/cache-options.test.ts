// A host gets the policy cache in listen mode by default and tunes it, the shared rate limit and the
// body limit with createToolgate's options; a bad value fails at construction with a stable code,
// never on a request.
import { ListenedPolicies } from '../../src/run/listened-policies';
import { createToolgate, internalsOf, type ToolgateOptions } from '../../src/toolgate';
import { ToolgateConfigError } from '../../src/errors';
import { readConfig } from '../../src/app/config';
import { createSequelize } from '../../src/db/connect';
import { createTestDatabase } from '../support/database';

const sequelize = createSequelize('postgres://127.0.0.1:1/none');
afterAll(() => sequelize.close());

const build = (options: Partial<ToolgateOptions>) => () => createToolgate({ sequelize, ...options });
const code = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return err instanceof ToolgateConfigError ? err.code : String(err);
  }
  return undefined;
};

describe('when createToolgate is given cache and rate-limit options', () => {
  test.each([
    [{ policyCache: 'sometimes' }],
    [{ policyCache: { mode: 'listen', maxAgents: 0 } }],
    [{ policyCache: { mode: 'listen', maxAgeMs: -1 } }],
    [{ policyCache: { mode: 'strict', heartbeatMs: 5 } }],
    [{ policyCache: { mode: 'listen', ttl: 5 } }],
  ])('then %j is refused with ERR_TOOLGATE_POLICY_CACHE', (options) => {
    expect(code(build(options as Partial<ToolgateOptions>))).toBe('ERR_TOOLGATE_POLICY_CACHE');
  });

  test('then an unknown rate-limit store is refused with ERR_TOOLGATE_RATE_LIMIT_STORE', () => {
    expect(code(build({ rateLimit: { windowMs: 60_000, limit: 5, store: 'redis' as 'memory' } }))).toBe('ERR_TOOLGATE_RATE_LIMIT_STORE');
  });

  test.each([['off'], ['listen'], ['strict'], [{ mode: 'listen', maxAgents: 50_000, maxAgeMs: 0, heartbeatMs: 1000 }]])(
    'then %j builds a toolgate that closes',
    async (policyCache) => {
      const tg = createToolgate({ sequelize, policyCache: policyCache as ToolgateOptions['policyCache'] });
      await expect(tg.close()).resolves.toBeUndefined();
    },
  );
});

describe('when createToolgate is given no policyCache option', () => {
  test('then it caches compiled policies in listen mode, the fast mode that is safe across instances', async () => {
    const tg = createToolgate({ sequelize });
    expect(internalsOf(tg).runs.policies).toBeInstanceOf(ListenedPolicies);
    await tg.close();
  });

  test("then 'off' still reads every run's policy through, and keeps none", async () => {
    const db = await createTestDatabase();
    const tg = createToolgate({ sequelize: db.sequelize, policyCache: 'off' });
    const agent = await tg.agents.create({ name: 'Uncached', toolkit_ids: [] });
    const policies = internalsOf(tg).runs.policies;
    await policies.get(agent.id);
    await policies.get(agent.id);
    expect(policies).not.toBeInstanceOf(ListenedPolicies);
    expect(policies.size).toBe(0);
    await tg.close();
    await db.drop();
  });
});

describe('when createToolgate is given a body limit', () => {
  test.each([['lots'], ['1 megabyte'], [''], [12 as unknown as string]])(
    'then %j is refused with ERR_TOOLGATE_BODY_LIMIT, not a TypeError',
    (bodyLimit) => {
      const error = (() => {
        try {
          createToolgate({ sequelize, bodyLimit });
        } catch (err) {
          return err;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(ToolgateConfigError);
      expect(error).toMatchObject({ code: 'ERR_TOOLGATE_BODY_LIMIT', message: expect.stringContaining('such as "1mb"') });
    },
  );

  test.each([['512kb'], ['1mb'], ['2MB']])('then %j builds a toolgate', async (bodyLimit) => {
    const tg = createToolgate({ sequelize, bodyLimit });
    await expect(tg.close()).resolves.toBeUndefined();
  });
});

describe('when the service reads the cache settings from its environment', () => {
  test('then it caches in listen mode and counts callers in PostgreSQL by default', () => {
    const config = readConfig({});
    expect(config.policyCache).toEqual({ mode: 'listen', maxAgents: 10_000, maxAgeMs: 300_000 });
    expect(config.rateLimit).toEqual({ windowMs: 60_000, limit: 120, store: 'postgres' });
  });

  test.each([
    [{ TOOLGATE_POLICY_CACHE: 'always' }, 'TOOLGATE_POLICY_CACHE'],
    [{ TOOLGATE_POLICY_CACHE_MAX_AGENTS: '0' }, 'TOOLGATE_POLICY_CACHE_MAX_AGENTS'],
    [{ TOOLGATE_RATE_LIMIT_STORE: 'redis' }, 'TOOLGATE_RATE_LIMIT_STORE'],
    [{ TOOLGATE_METRICS_TOKEN: 'short' }, 'TOOLGATE_METRICS_TOKEN'],
    [
      { TOOLGATE_METRICS_TOKEN: 'same-token-0123456789abcdef', TOOLGATE_ADMIN_TOKEN: 'same-token-0123456789abcdef' },
      'TOOLGATE_METRICS_TOKEN',
    ],
  ])('then %j stops the start naming %s', (env, variable) => {
    let error: unknown;
    try {
      readConfig(env);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ToolgateConfigError);
    expect((error as Error).message).toContain(variable);
  });
});
