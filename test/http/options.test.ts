// createToolgate's options are one schema: every option in it is in the README's options table and
// back, a key it does not take is refused at construction with the option most likely meant (at the
// top level and inside an option's own object), every option a host passes today still builds, and
// the service's environment starts from the same defaults.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { authenticatedSender } from '../../middleware/sender-check';
import { readConfig } from '../../src/app/config';
import { createSequelize } from '../../src/db/connect';
import { ToolgateConfigError } from '../../src/errors';
import { LocalModel } from '../../src/llm/local-model';
import { OPTION_DEFAULTS } from '../../src/option-bounds';
import { createToolgate, type ToolgateOptions } from '../../src/toolgate';
import { TOOLGATE_OPTION_NAMES } from '../../src/toolgate-options';
import { defineTool } from '../../src/tools/tool-registry';
import { z } from 'zod';

// Construction reads no database: a closed port is enough to build and close a toolgate.
const sequelize = createSequelize('postgres://127.0.0.1:1/none');
afterAll(() => sequelize.close());

const TOKEN = (c: string) => c.repeat(32);

function thrown(options: unknown): ToolgateConfigError | undefined {
  try {
    createToolgate(options as ToolgateOptions);
  } catch (err) {
    if (err instanceof ToolgateConfigError) return err;
    throw err;
  }
  return undefined;
}

/** The option names in the first column of the README's "### Options" table. */
function readmeOptionNames(): string[] {
  const readme = readFileSync(path.resolve(__dirname, '..', '..', 'README.md'), 'utf8');
  const section = readme.split(/^### Options$/m)[1]?.split(/^#{2,3} /m)[0] ?? '';
  return [...section.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]!);
}

describe("when the README's options table is read beside the schema", () => {
  test('then each names the same options, so an option is not added or documented in one place only', () => {
    const documented = readmeOptionNames();
    expect(documented.length).toBeGreaterThan(0);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual([...TOOLGATE_OPTION_NAMES].sort());
  });
});

describe('when createToolgate is given a key it does not take', () => {
  test.each([
    ['clientToken', 'clientTokens'],
    ['adminTokn', 'adminToken'],
    ['policycache', 'policyCache'],
    ['rateLimits', 'rateLimit'],
  ])('then %s is refused with ERR_TOOLGATE_UNKNOWN_OPTION, asking whether %s was meant', (key, meant) => {
    const error = thrown({ sequelize, [key]: 'x' });
    expect(error).toMatchObject({ code: 'ERR_TOOLGATE_UNKNOWN_OPTION', message: expect.stringContaining(`did you mean "${meant}"?`) });
  });

  test('then a key like no option is refused all the same, with the list of options', () => {
    const error = thrown({ sequelize, colour: 'blue' });
    expect(error?.code).toBe('ERR_TOOLGATE_UNKNOWN_OPTION');
    expect(error?.message).toMatch(/\{ colour \}\) names no option\. The options are sequelize, .*recovery/);
  });

  test('then the mistyped key is the one reported, even beside another bad value', () => {
    expect(thrown({ sequelize, bodyLimit: 'lots', clientToken: [TOKEN('c')] })?.code).toBe('ERR_TOOLGATE_UNKNOWN_OPTION');
  });
});

describe("when an option's own object holds a key it does not take", () => {
  test.each([
    [{ agentRuns: { maxStep: 4 } }, 'agentRuns', 'maxSteps'],
    [{ approvals: { expiry: 120_000 } }, 'approvals', 'expiryMs'],
    [{ recovery: { heartbeat: 1_000 } }, 'recovery', 'heartbeatMs'],
    [{ rateLimit: { windowMs: 60_000, limit: 5, stor: 'memory' } }, 'rateLimit', 'store'],
  ])('then %j is refused with ERR_TOOLGATE_UNKNOWN_OPTION, naming %s and the key meant', (options, parent, meant) => {
    const error = thrown({ sequelize, ...options });
    expect(error?.code).toBe('ERR_TOOLGATE_UNKNOWN_OPTION');
    expect(error?.message).toContain(`{ ${parent}: {`);
    expect(error?.message).toContain(`did you mean "${meant}"?`);
  });

  test.each([
    [{ policyCache: { mode: 'listen', ttl: 5 } }, 'ERR_TOOLGATE_POLICY_CACHE'],
    [{ routes: { chats: false } }, 'ERR_TOOLGATE_ROUTES'],
  ])('then %j keeps the code it had before the one schema: %s', (options, code) => {
    expect(thrown({ sequelize, ...options })?.code).toBe(code);
  });
});

describe('when an option that toolgate calls is not of its type', () => {
  test.each([
    [{ senderCheck: 'mx.example.com' }, /senderCheck.*a function/],
    [{ logger: console.log }, /logger.*error\(details, message\)/],
    [{ model: 'gpt-4o-mini' }, /model.*LanguageModel/],
    [{ embeddings: 'text-embedding-3-small' }, /embeddings.*Embeddings/],
    [{ embeddings: { model: '', embed: () => [] } }, /embeddings.*model name/],
    [{ tools: { lookup_order: {} } }, /tools.*a list/],
    [{ adminToken: 1234567890123456 }, /adminToken.*a string/],
    [{ adoptLegacyTables: 'yes' }, /adoptLegacyTables.*true or false/],
  ])('then %p is refused at construction with ERR_TOOLGATE_OPTION_TYPE', (options, message) => {
    expect(thrown({ sequelize, ...options })).toMatchObject({ code: 'ERR_TOOLGATE_OPTION_TYPE', message: expect.stringMatching(message) });
  });
});

/**
 * Every option, each key present and set to a value other than its default where it can be:
 * allowedHosts goes only with open client routes, which clientTokens and roleOf rule out, and
 * authservId is a senderCheck of its own, so both are tried below.
 */
const EVERY_OPTION: { [K in keyof Required<ToolgateOptions>]: ToolgateOptions[K] } = {
  sequelize,
  adoptLegacyTables: true,
  schema: 'toolgate_options',
  adminToken: TOKEN('a'),
  schedulerToken: TOKEN('s'),
  clientTokens: [TOKEN('c'), TOKEN('d')],
  metricsToken: TOKEN('m'),
  clientRoutes: 'authenticated',
  roleOf: () => null,
  allowedHosts: undefined,
  tools: [
    defineTool({
      id: 'lookup_order',
      display_name: 'Look up order',
      summary: 'Finds an order.',
      input: z.object({ order_id: z.string() }),
      execute: ({ order_id }) => ({ order_id }),
      timeoutMs: 5_000,
      legacy_name: 'order_lookup',
    }),
  ],
  authservId: undefined,
  senderCheck: authenticatedSender('mx.example.com'),
  embeddings: { model: 'fake-embed', dimensions: 8, embed: async (texts) => texts.map(() => [1, 0, 0, 0, 0, 0, 0, 0]) },
  model: new LocalModel(),
  logger: { error: () => undefined, warn: () => undefined, info: () => undefined },
  bodyLimit: '512kb',
  rateLimit: { windowMs: 60_000, limit: 120, store: 'memory' },
  policyCache: { mode: 'strict', maxAgents: 500, maxAgeMs: 0, heartbeatMs: 1_000 },
  routes: { chat: false, documents: false },
  agentRuns: { maxSteps: 4, maxToolCalls: 8, historyChars: 8_000, messageIdDomain: 'Mail.TheScoop.com' },
  approvals: { expiryMs: 3_600_000 },
  recovery: { heartbeatMs: 1_000, staleAfterMs: 5_000, sweepIntervalMs: 2_000, graceMs: 1_000 },
  retention: { keep: '90d', partitions: 'day' },
  // Connected when its tools are first needed (tg.startMcp()), never at construction.
  mcp: { mcpServers: { shop: { url: 'http://127.0.0.1:9/mcp', timeoutMs: 5_000 } } },
  mcpSessions: { ttlMs: 120_000, url: 'https://toolgate.thescoop.com/mcp', pollMs: 500 },
  tracing: { routingKey: 'hashed', content: true },
};

describe('when createToolgate is given every option it takes', () => {
  test('then the list above sets each option the schema lists, so a new option is tried here too', () => {
    expect(Object.keys(EVERY_OPTION).sort()).toEqual([...TOOLGATE_OPTION_NAMES].sort());
  });

  test('then it builds a toolgate, which closes', async () => {
    const tg = createToolgate(EVERY_OPTION);
    expect(tg.tools.map((t) => t.id)).toContain('lookup_order');
    await expect(tg.close()).resolves.toBeUndefined();
  });

  test.each([
    [{ clientRoutes: 'open', allowedHosts: ['toolgate.internal'] }],
    [{ authservId: 'mx.example.com' }],
    [{ rateLimit: false }],
    [{ policyCache: 'off' }],
  ])('then the other forms an option takes build too: %j', async (options) => {
    const tg = createToolgate({ sequelize, ...(options as Partial<ToolgateOptions>) });
    await expect(tg.close()).resolves.toBeUndefined();
  });
});

describe('when createToolgate is given MCP session settings out of bounds', () => {
  test.each([
    [{ ttlMs: 1_000 }, /ttlMs: 1000.*from 60000 to 86400000/],
    [{ pollMs: 0 }, /pollMs: 0/],
    [{ url: 'mcp' }, /url: "mcp".*such as "\/mcp"/],
    [{ url: 'ftp://x.example/mcp' }, /absolute http\(s\) URL/],
  ])('then %j is refused at construction with ERR_TOOLGATE_MCP_SESSIONS', (mcpSessions, message) => {
    expect(thrown({ sequelize, mcpSessions })).toMatchObject({
      code: 'ERR_TOOLGATE_MCP_SESSIONS',
      message: expect.stringMatching(message),
    });
  });
});

describe('when createToolgate is given a retention', () => {
  test.each(['90d', '1d', 'off', { keep: '365d' }, { partitions: 'day' }])('then %j builds', async (retention) => {
    const tg = createToolgate({ sequelize, retention: retention as ToolgateOptions['retention'] });
    await expect(tg.close()).resolves.toBeUndefined();
  });

  test.each([
    ['90', /keep is a number of days/],
    ['0d', /from 1 to 36500/],
    ['3m', /keep is a number of days/],
    [90, /give "90d"/],
    [{ keep: '90d', partitions: 'week' }, /partitions is "month" or "day"/],
    [{ keep: '90d', granularity: 'day' }, /not granularity/],
  ])('then %j is refused at construction with ERR_TOOLGATE_RETENTION', (retention, message) => {
    expect(thrown({ sequelize, retention })).toMatchObject({ code: 'ERR_TOOLGATE_RETENTION', message: expect.stringMatching(message) });
  });
});

describe('when createToolgate is given tracing settings it cannot follow', () => {
  test.each([
    [{ routingKey: 'sha1' }, /routingKey: "sha1".*'none'.*'hashed'.*'plain'/],
    [{ content: 'yes' }, /content: "yes".*true or false/],
    [{ routing: 'plain' }, /tracing: \{ routing \}.*routingKey and content/],
    ['plain', /takes an object/],
  ])('then %j is refused at construction with ERR_TOOLGATE_TRACING', (tracing, message) => {
    expect(thrown({ sequelize, tracing: tracing as never })).toMatchObject({
      code: 'ERR_TOOLGATE_TRACING',
      message: expect.stringMatching(message),
    });
  });

  test('then false, which makes no span at all, is taken', async () => {
    const tg = createToolgate({ sequelize, tracing: false });
    await expect(tg.close()).resolves.toBeUndefined();
  });
});

describe('when createToolgate is told how senders count', () => {
  test.each(['mx thescoop; com', '', 'mx.example.com;'])(
    'then an authservId that is not one token (%j) is refused at construction with ERR_TOOLGATE_AUTHSERV_ID',
    (authservId) => {
      expect(thrown({ sequelize, authservId })).toMatchObject({
        code: 'ERR_TOOLGATE_AUTHSERV_ID',
        message: expect.stringContaining('createToolgate({ authservId:'),
      });
    },
  );

  test('then authservId beside a senderCheck is refused with ERR_TOOLGATE_SENDER_CHECK, as two answers to one question', () => {
    const error = thrown({ sequelize, authservId: 'mx.example.com', senderCheck: authenticatedSender('mx.other.example') });
    expect(error).toMatchObject({ code: 'ERR_TOOLGATE_SENDER_CHECK', message: expect.stringContaining('Give one of them') });
  });
});

describe('when the service reads its environment with nothing set', () => {
  test('then it starts from the defaults the options schema declares', () => {
    const config = readConfig({});
    const { mode, maxAgents, maxAgeMs } = OPTION_DEFAULTS.policyCache;
    expect(config.policyCache).toEqual({ mode, maxAgents, maxAgeMs });
    expect(config.bodyLimit).toBe(OPTION_DEFAULTS.bodyLimit);
    expect(config.agentRuns).toEqual(OPTION_DEFAULTS.agentRuns);
    expect(config.approvalExpiryMs).toBe(OPTION_DEFAULTS.approvalExpiryMs);
    expect(config.rateLimit).toMatchObject({ store: OPTION_DEFAULTS.rateLimitStore });
    expect(config.retention).toEqual({ keepDays: null, partitions: 'month' });
  });

  test('then TOOLGATE_RETENTION and TOOLGATE_PARTITIONS are read as the retention option takes them', () => {
    expect(readConfig({ TOOLGATE_RETENTION: '90d', TOOLGATE_PARTITIONS: 'day' }).retention).toEqual({ keepDays: 90, partitions: 'day' });
    expect(readConfig({ TOOLGATE_RETENTION: 'off' }).retention).toEqual({ keepDays: null, partitions: 'month' });
  });

  test.each([
    ['TOOLGATE_APPROVAL_EXPIRY_HOURS', '721'],
    ['TOOLGATE_POLICY_CACHE_MAX_AGENTS', '10000001'],
    ['TOOLGATE_AGENT_MAX_STEPS', '101'],
    ['TOOLGATE_RETENTION', '36501d'],
    ['TOOLGATE_RETENTION', '90'],
    ['TOOLGATE_PARTITIONS', 'week'],
  ])('then %s=%s, past the bound the option has, stops the start naming it', (name, value) => {
    expect(() => readConfig({ [name]: value })).toThrow(
      expect.objectContaining({ code: 'ERR_TOOLGATE_ENV', message: expect.stringContaining(name) }),
    );
  });
});
