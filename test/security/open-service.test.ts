// The service without TOOLGATE_CLIENT_TOKENS, as an operator runs it (`tsx src/app/server.ts`, its own
// process): the client routes are open on purpose and the log says so; and, open, the API answers
// only the Host names the service may be reached by, so a web page cannot reach it by DNS rebinding.
import { promises as fs } from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { readConfig } from '../../src/app/config';
import { ToolgateConfigError } from '../../src/errors';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startService, type RunningService } from '../support/service-process';

jest.setTimeout(120_000);

const ADMIN_TOKEN = 'open-service-admin-token-0123456789';
const CLIENT_TOKEN = 'open-service-client-token-0123456789';

let db: TestDatabase;
let dataDir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-open-'));
});
afterAll(async () => {
  await db.drop();
  await fs.rm(dataDir, { recursive: true, force: true });
});

/** Starts the service and resolves once it listens, with what it logged so far and after. */
function start(env: Record<string, string>): Promise<RunningService> {
  return startService({
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      TOOLGATE_DATA_DIR: dataDir,
      TOOLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      TOOLGATE_DEMO: 'off',
      TOOLGATE_POLICY_CACHE: 'off',
      TOOLGATE_RATE_LIMIT_STORE: 'memory',
      TOOLGATE_LOG_FORMAT: 'json',
      ...env,
    },
  });
}

/** A request with the Host header a browser would send (fetch may not set Host itself). */
async function get(
  base: string,
  url: string,
  host: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: { code?: string; detail?: string } }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${url}`, { headers: { host, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('when the service starts with no TOOLGATE_CLIENT_TOKENS', () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await start({});
  });
  afterAll(() => service.stop());

  test('then it logs that the client routes are open, as its own explicit setting', () => {
    expect(service.messages()).toContainEqual(
      expect.stringMatching(/^no TOOLGATE_CLIENT_TOKENS set: the client routes are open \(the legacy behaviour\)/),
    );
  });

  test('then an anonymous caller reaches a client route by a loopback name or the listening address', async () => {
    expect((await get(service.url, '/api/agents', `localhost:${service.port}`)).status).toBe(200);
    expect((await get(service.url, '/api/agents', `127.0.0.1:${service.port}`)).status).toBe(200);
  });

  test('then a request for a name a web page could rebind to 127.0.0.1 is refused 421, saying what to set', async () => {
    const res = await get(service.url, '/api/agents', 'evil.example');
    expect(res.status).toBe(421);
    expect(res.body.code).toBe('host_not_allowed');
    expect(res.body.detail).toMatch(/TOOLGATE_ALLOWED_HOSTS/);
    expect((await get(service.url, '/api/agents', `evil.example:${service.port}`)).status).toBe(421);
    // A caller with a token is no page's rebinding (a page holds no token): any name the operator uses answers it.
    expect((await get(service.url, '/api/agents', `toolgate:${service.port}`, { authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(
      200,
    );
  });
});

describe('when the operator names the hosts the open service is reached by', () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await start({ TOOLGATE_ALLOWED_HOSTS: 'toolgate.internal, ops.example.com' });
  });
  afterAll(() => service.stop());

  test('then requests for those names are answered, and others are still refused', async () => {
    expect((await get(service.url, '/api/agents', 'toolgate.internal:3000')).status).toBe(200);
    expect((await get(service.url, '/api/agents', 'ops.example.com')).status).toBe(200);
    expect((await get(service.url, '/api/agents', 'evil.example')).status).toBe(421);
  });
});

describe('when the service starts with TOOLGATE_CLIENT_TOKENS', () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await start({ TOOLGATE_CLIENT_TOKENS: CLIENT_TOKEN });
  });
  afterAll(() => service.stop());

  test('then it does not say the routes are open, an anonymous caller is refused, and a client token is served by any name', async () => {
    expect(service.messages().some((m) => /client routes are open/.test(m))).toBe(false);
    expect((await get(service.url, '/api/agents', `localhost:${service.port}`)).status).toBe(401);
    expect((await get(service.url, '/api/agents', 'toolgate.example.com', { authorization: `Bearer ${CLIENT_TOKEN}` })).status).toBe(200);
  });
});

describe('when the service reads its client authentication settings', () => {
  test('then no client tokens means the open mode, and tokens mean authenticated client routes', () => {
    expect(readConfig({})).toMatchObject({ clientRoutes: 'open', allowedHosts: [] });
    expect(readConfig({ TOOLGATE_CLIENT_TOKENS: CLIENT_TOKEN })).toMatchObject({
      clientRoutes: 'authenticated',
      clientTokens: [CLIENT_TOKEN],
    });
  });

  test('then the listening HOST, when it is a name, is one the open service answers to', () => {
    expect(readConfig({ HOST: 'toolgate.lan', TOOLGATE_ALLOWED_HOSTS: 'Ops.Example.com' })).toMatchObject({
      allowedHosts: ['toolgate.lan', 'ops.example.com'],
    });
    expect(readConfig({ HOST: '0.0.0.0' })).toMatchObject({ allowedHosts: [] });
  });

  test('then allowed hosts that are not names, or that would do nothing beside client tokens, stop the start', () => {
    expect(() => readConfig({ TOOLGATE_ALLOWED_HOSTS: 'https://toolgate.internal/' })).toThrow(
      expect.objectContaining({ code: 'ERR_TOOLGATE_ENV', message: expect.stringMatching(/TOOLGATE_ALLOWED_HOSTS/) }),
    );
    expect(() => readConfig({ TOOLGATE_ALLOWED_HOSTS: 'toolgate.internal', TOOLGATE_CLIENT_TOKENS: CLIENT_TOKEN })).toThrow(
      ToolgateConfigError,
    );
  });
});
