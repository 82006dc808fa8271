// Who may call the client routes of a host's mounted router: nobody until the host says how (client
// tokens, its own authentication through roleOf, or an explicit open mode); roleOf's answers, its
// failures and its callers' budgets; and, while the routes are open, only the Host names the service
// may be reached by (no DNS rebinding).
import express from 'express';
import request from 'supertest';
import { currentRun } from '../../middleware/current-run';
import { ensureScoopData } from '../../src/app/demo/scoop-data';
import { SCOOP_TOOLS } from '../../src/app/demo/scoop-tools';
import { createToolgate, type Toolgate, type ToolgateOptions } from '../../src/toolgate';
import { ADMIN_TOKEN, CLIENT_TOKEN } from '../support/app';
import { createTestDatabase, type TestDatabase } from '../support/database';

let db: TestDatabase;
let agent: number;
const built: Toolgate[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await ensureScoopData(db.sequelize);
  const tg = createToolgate({ sequelize: db.sequelize, tools: SCOOP_TOOLS, adminToken: ADMIN_TOKEN });
  await tg.syncSystemToolkits();
  const support = await tg.toolkits.create({ name: 'Support', member_tool_ids: ['lookup_order'] });
  agent = (await tg.agents.create({ name: 'Sundae', toolkit_ids: [] })).id;
  await tg.attachments.attach(agent, { toolkit_id: support.id });
});

afterAll(async () => {
  for (const tg of built) await tg.close();
  await db.drop();
});

/** A host's app as the README writes it: toolgate's router under /api, its own gated route, toolgate's error handler. */
function hostApp(options: Partial<ToolgateOptions> = {}): { tg: Toolgate; app: express.Express } {
  const tg = createToolgate({ sequelize: db.sequelize, tools: SCOOP_TOOLS, adminToken: ADMIN_TOKEN, ...options });
  built.push(tg);
  const app = express();
  app.use('/api', tg.router);
  app.post('/triage/:id', express.json(), tg.toolRun(), tg.requireTool('lookup_order'), (req, res) => {
    res.json({ tools: currentRun(req).tools });
  });
  app.use(tg.errorHandler());
  return { tg, app };
}

const lookup = { tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' };

async function recordCount(app: express.Express): Promise<number> {
  const res = await request(app).get(`/api/agents/${agent}/tool-calls`).set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200);
  return (res.body as unknown[]).length;
}

describe('when a host mounts the router with no client authentication configured', () => {
  test('then an anonymous dispatch is refused 401, says what to configure, and runs nothing', async () => {
    const { app } = hostApp();
    const before = await recordCount(app);
    const res = await request(app).post(`/api/agents/${agent}/tool-calls`).send(lookup);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthenticated');
    expect(res.body.detail).toMatch(/clientTokens.*roleOf.*clientRoutes: 'open'/);
    expect(await recordCount(app)).toBe(before);
  });

  test('then the other client routes are refused too', async () => {
    const { app } = hostApp();
    await request(app).get(`/api/agents/${agent}/tasks`).expect(401);
    await request(app).get(`/api/agents/${agent}`).expect(401);
    await request(app).post(`/api/agents/${agent}/chat`).send({ message: 'hi' }).expect(401);
    await request(app).post(`/api/agents/${agent}/email/analyze`).send({ from: 'jane@acme.com', body: 'Where is my order?' }).expect(401);
    await request(app).post(`/api/agents/${agent}/documents/search`).send({ query: 'refund' }).expect(401);
    await request(app)
      .post(`/api/agents/${agent}/messages`)
      .send({ message: { from: 'jane@acme.com', body: 'Hello' } })
      .expect(401);
  });

  test("then the admin routes and the host's own gated route work as before", async () => {
    const { app } = hostApp();
    await request(app).get('/api/toolkits').set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200);
    await request(app).get('/api/toolkits').expect(401);
    const res = await request(app).post(`/triage/${agent}`).send({ from: 'jane@acme.com' }).expect(200);
    expect(res.body.tools).toEqual(['lookup_order']);
  });
});

describe('when the host opens the client routes explicitly', () => {
  test('then an anonymous dispatch runs, as the legacy API did', async () => {
    const { app } = hostApp({ clientRoutes: 'open' });
    const res = await request(app).post(`/api/agents/${agent}/tool-calls`).send(lookup).expect(200);
    expect(res.body.status).toBe('success');
  });

  test('then a token that is not one toolgate knows is still a 401', async () => {
    const { app } = hostApp({ clientRoutes: 'open' });
    await request(app)
      .post(`/api/agents/${agent}/tool-calls`)
      .set('Authorization', 'Bearer not-a-token-of-this-service')
      .send(lookup)
      .expect(401);
  });

  test('then a Host name a page could rebind is refused 421, before anything runs', async () => {
    const { app } = hostApp({ clientRoutes: 'open' });
    const before = await recordCount(app);
    const res = await request(app).post(`/api/agents/${agent}/tool-calls`).set('Host', 'evil.example').send(lookup);
    expect(res.status).toBe(421);
    expect(res.body.code).toBe('host_not_allowed');
    expect(res.body.detail).toMatch(/evil\.example.*allowedHosts/);
    expect(await recordCount(app)).toBe(before);
  });

  test('then loopback names, IP addresses and the allowed names are answered', async () => {
    const { app } = hostApp({ clientRoutes: 'open', allowedHosts: ['toolgate.internal'] });
    for (const host of [
      'localhost:3000',
      'app.localhost',
      '127.0.0.1:3000',
      '[::1]:3000',
      '192.168.1.20',
      'toolgate.internal:8080',
      'TOOLGATE.internal',
    ]) {
      const res = await request(app).get(`/api/agents/${agent}`).set('Host', host);
      expect({ host, status: res.status }).toEqual({ host, status: 200 });
    }
    await request(app).get(`/api/agents/${agent}`).set('Host', 'toolgate.internal.evil.example').expect(421);
  });

  test('then behind a trusted proxy, a forwarded host cannot stand in for the Host a page sent', async () => {
    // After rebinding, the page is same-origin with the service and may set X-Forwarded-Host itself;
    // with trust proxy on loopback, Express would read the host from that header alone.
    const { tg } = hostApp({ clientRoutes: 'open' });
    const app = express();
    app.set('trust proxy', 'loopback');
    app.use('/api', tg.router);
    const before = await recordCount(app);
    const forged = await request(app)
      .post(`/api/agents/${agent}/tool-calls`)
      .set('Host', 'evil.example')
      .set('X-Forwarded-Host', 'localhost')
      .send(lookup);
    expect(forged.status).toBe(421);
    const through = await request(app)
      .post(`/api/agents/${agent}/tool-calls`)
      .set('Host', '127.0.0.1:3000')
      .set('X-Forwarded-Host', 'evil.example')
      .send(lookup);
    expect(through.status).toBe(421);
    expect(await recordCount(app)).toBe(before);
    await request(app).get(`/api/agents/${agent}`).set('Host', '127.0.0.1:3000').set('X-Forwarded-Host', 'localhost').expect(200);
  });

  test('then a caller with a toolgate token is answered by any name: a page that rebinds a name holds no token', async () => {
    const { app } = hostApp({ clientRoutes: 'open' });
    await request(app).get(`/api/agents/${agent}`).set('Host', 'toolgate:3000').set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200);
    await request(app).get(`/api/agents/${agent}`).set('Host', 'toolgate:3000').expect(421);
  });
});

describe('when the host hands toolgate its own authentication (roleOf)', () => {
  const byHeader: ToolgateOptions['roleOf'] = (req) => {
    const user = req.get('x-user');
    if (user === 'ops') return 'admin';
    return user ? { role: 'client', caller: user } : null;
  };

  test('then a caller it gives the client role dispatches, and one it gives none is refused 401', async () => {
    const { app } = hostApp({ roleOf: byHeader });
    const res = await request(app).post(`/api/agents/${agent}/tool-calls`).set('x-user', 'jane').send(lookup).expect(200);
    expect(res.body.status).toBe('success');
    const refused = await request(app).post(`/api/agents/${agent}/tool-calls`).send(lookup).expect(401);
    expect(refused.body.code).toBe('unauthenticated');
  });

  test('then a client may not call an admin route (403), and a caller it makes admin may', async () => {
    const { app } = hostApp({ roleOf: byHeader });
    expect((await request(app).get('/api/toolkits').set('x-user', 'jane').expect(403)).body.code).toBe('forbidden');
    await request(app).get('/api/toolkits').set('x-user', 'ops').expect(200);
  });

  test('then a promise of a role works the same', async () => {
    const { app } = hostApp({ roleOf: async (req) => (req.get('x-user') ? 'client' : null) });
    await request(app).get(`/api/agents/${agent}`).set('x-user', 'jane').expect(200);
    await request(app).get(`/api/agents/${agent}`).expect(401);
  });

  test('then a toolgate token wins without asking it, and a bearer token toolgate does not know is left to it', async () => {
    const asked: (string | undefined)[] = [];
    const { app } = hostApp({
      clientTokens: [CLIENT_TOKEN],
      roleOf: (req) => {
        asked.push(req.get('authorization'));
        return req.get('authorization') === 'Bearer host-jwt' ? 'client' : null;
      },
    });
    await request(app).get('/api/toolkits').set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200);
    await request(app).get(`/api/agents/${agent}`).set('Authorization', `Bearer ${CLIENT_TOKEN}`).expect(200);
    expect(asked).toEqual([]);
    await request(app).get(`/api/agents/${agent}`).set('Authorization', 'Bearer host-jwt').expect(200);
    await request(app).get(`/api/agents/${agent}`).set('Authorization', 'Bearer someone-else').expect(401);
    expect(asked).toEqual(['Bearer host-jwt', 'Bearer someone-else']);
  });

  test('then when it throws or rejects, the request is refused 503 and nothing runs', async () => {
    for (const roleOf of [
      () => {
        throw new Error('the session store is down');
      },
      () => Promise.reject(new Error('the session store is down')),
    ]) {
      const { app } = hostApp({ roleOf });
      const before = await recordCount(app);
      const res = await request(app).post(`/api/agents/${agent}/tool-calls`).send(lookup);
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('authentication_unavailable');
      expect(res.body.detail).not.toMatch(/session store/);
      expect(await recordCount(app)).toBe(before);
    }
  });

  test('then an answer that is not a role is refused as a misconfiguration, never as a grant', async () => {
    const { app } = hostApp({ roleOf: () => 'superuser' as never });
    const res = await request(app).post(`/api/agents/${agent}/tool-calls`).send(lookup);
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('misconfigured');
    expect(res.body.detail).toMatch(/roleOf/);
  });

  test('then a promise of an answer it cannot show (a BigInt caller) is refused as a misconfiguration, and the process lives on', async () => {
    const { app } = hostApp({ roleOf: async () => ({ role: 'client', caller: 7n }) as never });
    const res = await request(app).get(`/api/agents/${agent}`);
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('misconfigured');
    expect(res.body.detail).toMatch(/roleOf answered/);
  });

  test('then a whole-number caller id (a database id) names the caller, as its string would', async () => {
    const { app } = hostApp({
      roleOf: (req) => ({ role: 'client', caller: Number(req.get('x-user-id')) }),
      rateLimit: { windowMs: 60_000, limit: 1, store: 'memory' },
    });
    await request(app).get(`/api/agents/${agent}`).set('x-user-id', '42').expect(200);
    await request(app).get(`/api/agents/${agent}`).set('x-user-id', '42').expect(429);
    await request(app).get(`/api/agents/${agent}`).set('x-user-id', '43').expect(200);
  });

  test('then callers it lets in without naming them do not share Idempotency-Keys with anonymous ones', async () => {
    const named = hostApp({ roleOf: (req) => (req.get('x-signed-in') ? 'client' : null) });
    const open = hostApp({ clientRoutes: 'open' });
    const key = `shared-${Date.now()}`;
    const before = await recordCount(open.app);
    const first = await request(named.app)
      .post(`/api/agents/${agent}/tool-calls`)
      .set('x-signed-in', '1')
      .set('Idempotency-Key', key)
      .send(lookup)
      .expect(200);
    const anonymous = await request(open.app).post(`/api/agents/${agent}/tool-calls`).set('Idempotency-Key', key).send(lookup).expect(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(anonymous.headers['idempotent-replayed']).toBeUndefined();
    expect(await recordCount(open.app)).toBe(before + 2);
  });

  test('then the rate limit counts each caller it names on its own, whatever address they share', async () => {
    const { app } = hostApp({ roleOf: byHeader, rateLimit: { windowMs: 60_000, limit: 1, store: 'memory' } });
    await request(app).get(`/api/agents/${agent}`).set('x-user', 'jane').expect(200);
    expect((await request(app).get(`/api/agents/${agent}`).set('x-user', 'jane').expect(429)).body.code).toBe('rate_limited');
    await request(app).get(`/api/agents/${agent}`).set('x-user', 'mara').expect(200);
  });
});

describe('when the client authentication options are wrong', () => {
  test.each([
    [{ clientRoutes: 'opne' }, /clientRoutes: "opne".*did you mean "open"/],
    [{ clientRoutes: 'open', clientTokens: [CLIENT_TOKEN] }, /clientRoutes: 'open'.*clientTokens/],
    [{ clientRoutes: 'open', roleOf: () => 'client' }, /clientRoutes: 'open'.*roleOf/],
    [{ roleOf: 'client' }, /roleOf.*function/],
    [{ allowedHosts: ['toolgate.internal'] }, /allowedHosts.*clientRoutes: 'open'/],
    [{ clientRoutes: 'open', allowedHosts: ['http://toolgate.internal/'] }, /allowedHosts.*"http:\/\/toolgate.internal\/".*host name/],
  ])('then createToolgate(%p) throws ERR_TOOLGATE_CLIENT_AUTH at construction, saying what to give', (options, message) => {
    expect(() => createToolgate({ sequelize: db.sequelize, adminToken: ADMIN_TOKEN, ...(options as Partial<ToolgateOptions>) })).toThrow(
      expect.objectContaining({ code: 'ERR_TOOLGATE_CLIENT_AUTH', message: expect.stringMatching(message) }),
    );
  });
});
