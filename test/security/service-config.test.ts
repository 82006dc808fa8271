// The service's own secrets and settings: the admin token made on first start (kept with the data,
// readable by its owner only, the same on every later start), and a bad setting that stops the
// start with a sentence naming the variable.
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureAdminToken } from '../../src/app/admin-token';
import { readConfig } from '../../src/app/config';
import { ToolgateConfigError } from '../../src/errors';

let dir: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-token-'));
});
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

describe('when no admin token is configured', () => {
  test('then the first start makes a long random one, readable by its owner only', async () => {
    const made = await ensureAdminToken(dir);
    expect(made.created).toBe(true);
    expect(made.token).toMatch(/^[0-9a-f]{64}$/);
    expect(made.file).toBe(path.join(dir, 'admin-token'));
    expect((await fs.stat(made.file)).mode & 0o777).toBe(0o600);
  });

  test('then a later start reads the same token back', async () => {
    const first = await ensureAdminToken(dir);
    const again = await ensureAdminToken(dir);
    expect(again).toEqual({ ...first, created: false });
  });
});

describe('when the environment holds a bad setting', () => {
  test.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ TOOLGATE_BODY_LIMIT: 'lots' }, 'TOOLGATE_BODY_LIMIT'],
    [{ TOOLGATE_RATE_LIMIT: 'fast' }, 'TOOLGATE_RATE_LIMIT'],
    [{ TOOLGATE_AUTHSERV_ID: 'not an id; dmarc=pass' }, 'TOOLGATE_AUTHSERV_ID'],
    [{ TOOLGATE_AGENT_HISTORY_CHARS: '10' }, 'TOOLGATE_AGENT_HISTORY_CHARS'],
    [{ TOOLGATE_MESSAGE_ID_DOMAIN: 'not a host' }, 'TOOLGATE_MESSAGE_ID_DOMAIN'],
    [{ TOOLGATE_APPROVAL_EXPIRY_HOURS: '0' }, 'TOOLGATE_APPROVAL_EXPIRY_HOURS'],
    [{ TOOLGATE_DB_SCHEMA: 'Tool-Gate' }, 'TOOLGATE_DB_SCHEMA'],
    [{ TOOLGATE_DB_SCHEMA: 'public' }, 'TOOLGATE_DB_SCHEMA'],
    [{ TOOLGATE_ADOPT_LEGACY_TABLES: 'yes' }, 'TOOLGATE_ADOPT_LEGACY_TABLES'],
  ])('then %j stops the start naming %s', (env, variable) => {
    expect(() => readConfig(env)).toThrow(ToolgateConfigError);
    expect(() => readConfig(env)).toThrow(variable);
  });

  test('then an empty environment gives the documented defaults', () => {
    expect(readConfig({})).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      clientTokens: [],
      bodyLimit: '1mb',
      demo: 'auto',
      rateLimit: { windowMs: 60_000, limit: 120 },
    });
    expect(readConfig({})).toMatchObject({
      agentRuns: { maxSteps: 8, maxToolCalls: 16, historyChars: 32_000 },
      approvalExpiryMs: 72 * 3_600_000,
    });
    expect(readConfig({}).agentRuns.messageIdDomain).toBeUndefined();
    // toolgate's tables where the database's search_path puts them, and no legacy table adopted unasked.
    expect(readConfig({})).toMatchObject({ schema: undefined, adoptLegacyTables: false });
  });

  test('then the schema and the adoption of the legacy tables are read as the plugin takes them', () => {
    expect(readConfig({ TOOLGATE_DB_SCHEMA: ' toolgate ', TOOLGATE_ADOPT_LEGACY_TABLES: 'on' })).toMatchObject({
      schema: 'toolgate',
      adoptLegacyTables: true,
    });
  });

  test('then the thread and approval settings are read as the plugin takes them', () => {
    expect(
      readConfig({
        TOOLGATE_AGENT_HISTORY_CHARS: '8000',
        TOOLGATE_MESSAGE_ID_DOMAIN: 'Mail.TheScoop.com',
        TOOLGATE_APPROVAL_EXPIRY_HOURS: '24',
      }),
    ).toMatchObject({
      agentRuns: { historyChars: 8000, messageIdDomain: 'mail.thescoop.com' },
      approvalExpiryMs: 24 * 3_600_000,
    });
  });
});
