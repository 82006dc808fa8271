// What a host app meets when it embeds toolgate: refusals in the JSON error shape from its own
// routes, a loud error for a missing body parser or a missing toolRun(), nothing added to req, route
// groups it can switch off, no environment read by the library, two toolgates on two databases in
// one process, the router's own errors in its own shape whatever the host's handlers, and a process
// that ends without tg.close().
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import express from 'express';
import request from 'supertest';
import { createSequelize } from '../../src/db/connect';
import { createToolgate, type Toolgate } from '../../src/toolgate';
import { currentRun } from '../../middleware/current-run';
import { ToolgateConfigError } from '../../src/errors';
import { LocalModel } from '../../src/llm/local-model';
import { internalsOf } from '../../src/toolgate';
import { createTestApp, ADMIN_TOKEN, type TestApp } from '../support/app';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;
let agent: number;

beforeAll(async () => {
  t = await createTestApp();
  const analysis = await makeToolkit(t, 'Analysis', ['email_analyzer']);
  agent = await makeAgent(t, { name: 'Gated', toolkit_ids: [] });
  await t
    .admin()
    .post(`/api/agents/${agent}/toolkits`)
    .send({ toolkit_id: analysis, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] })
    .expect(201);
});

afterAll(() => t.close());

/** A host's app: its own auth middleware sets req.auth, its own error handler comes after toolgate's. */
function hostApp(tg: Toolgate, options: { parseBody: boolean }): express.Express {
  const app = express();
  app.use((req, _res, next) => {
    (req as express.Request & { auth?: unknown }).auth = { sub: 'host-user' };
    next();
  });
  const parsers = options.parseBody ? [express.json()] : [];
  app.post('/triage/:id', ...parsers, tg.toolRun(), tg.requireTool('email_analyzer'), (req, res) => {
    res.json({
      tools: currentRun(req).tools,
      hostAuth: (req as express.Request & { auth?: unknown }).auth,
      keys: Object.keys(res.locals.toolgate ?? {}),
      onRequest: 'toolgate' in req,
    });
  });
  app.get('/boom', () => {
    throw new Error("the host's own failure");
  });
  app.use(tg.errorHandler());
  app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(599).json({ host: err.message });
  });
  return app;
}

describe("when a host mounts toolRun() and requireTool() on its own route, with the plugin's error handler", () => {
  test('then a refusal is the HTTP.md JSON shape, not an HTML page', async () => {
    const res = await request(hostApp(t.tg, { parseBody: true }))
      .post(`/triage/${agent}`)
      .send({ from: 'jane@acme.com' })
      .expect(403);
    expect(res.headers['content-type']).toMatch(/json/);
    expect(res.body).toEqual({
      detail: expect.stringMatching(/^email_analyzer is not offered to this run: /),
      code: 'tool_forbidden',
      tool: 'email_analyzer',
    });
  });

  test("then toolgate keeps to res.locals.toolgate: the host's req.auth is untouched and nothing is added to req", async () => {
    const res = await request(hostApp(t.tg, { parseBody: true }))
      .post(`/triage/${agent}`)
      .send({ from: 'mara@thescoop.com' })
      .expect(200);
    expect(res.body).toEqual({ tools: ['email_analyzer'], hostAuth: { sub: 'host-user' }, keys: ['run'], onRequest: false });
  });

  test("then an error that is not toolgate's goes on to the host's own handler", async () => {
    const res = await request(hostApp(t.tg, { parseBody: true }))
      .get('/boom')
      .expect(599);
    expect(res.body).toEqual({ host: "the host's own failure" });
  });
});

describe('when a host forgets to parse the JSON body before toolRun()', () => {
  test('then the first request is a loud misconfiguration naming the fix, not a quiet refusal', async () => {
    const res = await request(hostApp(t.tg, { parseBody: false }))
      .post(`/triage/${agent}`)
      .send({ from: 'mara@thescoop.com' })
      .expect(500);
    expect(res.body.code).toBe('misconfigured');
    expect(res.body.detail).toMatch(/mount express\.json\(\) before toolRun\(\)/);
  });

  test('then a request without a body is still resolved, as a run with no sender', async () => {
    await request(hostApp(t.tg, { parseBody: false }))
      .post(`/triage/${agent}`)
      .expect(403);
  });
});

describe('when a host mounts a gate or reads the run without toolRun() before it', () => {
  function appWithout(route: express.RequestHandler[]): express.Express {
    const app = express();
    app.post('/triage/:id', express.json(), ...route, (_req, res) => {
      res.json({ granted: true });
    });
    app.use(t.tg.errorHandler());
    return app;
  }

  test('then requireTool() answers a loud misconfiguration naming toolRun(), never a grant', async () => {
    const res = await request(appWithout([t.tg.requireTool('email_analyzer')]))
      .post(`/triage/${agent}`)
      .send({ from: 'mara@thescoop.com' })
      .expect(500);
    expect(res.body.code).toBe('misconfigured');
    expect(res.body.detail).toMatch(/toolRun\(\) is not mounted before it/);
  });

  test('then currentRun(req) in the handler is the same loud misconfiguration', async () => {
    const reads: express.RequestHandler = (req, _res, next) => {
      currentRun(req);
      next();
    };
    const res = await request(appWithout([reads]))
      .post(`/triage/${agent}`)
      .send({ from: 'mara@thescoop.com' })
      .expect(500);
    expect(res.body.code).toBe('misconfigured');
    expect(res.body.detail).toMatch(/toolRun\(\) is not mounted before it/);
  });
});

describe('when a route group is switched off', () => {
  test('then its routes are not served and the others are', async () => {
    const tg = createToolgate({ sequelize: t.sequelize, adminToken: ADMIN_TOKEN, routes: { chat: false, documents: false } });
    const app = express().use('/api', tg.router);
    await request(app).post(`/api/agents/${agent}/chat`).send({ message: 'hi' }).expect(404);
    await request(app).get(`/api/agents/${agent}/documents`).expect(404);
    await request(app).get('/api/toolkits').set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200);
  });

  test('then an unknown group is refused when the plugin is built, with a did-you-mean', () => {
    expect(() => createToolgate({ sequelize: t.sequelize, routes: { chats: false } as never })).toThrow(ToolgateConfigError);
    expect(() => createToolgate({ sequelize: t.sequelize, routes: { chats: false } as never })).toThrow(/did you mean "chat"/);
  });
});

describe('when the process environment names a model provider', () => {
  const saved = process.env.TOOLGATE_MODEL_PROVIDER;
  afterAll(() => {
    if (saved === undefined) delete process.env.TOOLGATE_MODEL_PROVIDER;
    else process.env.TOOLGATE_MODEL_PROVIDER = saved;
  });

  test('then the library ignores it: only the options decide (the service reads the environment)', () => {
    process.env.TOOLGATE_MODEL_PROVIDER = 'openai';
    const tg = createToolgate({ sequelize: t.sequelize });
    // The model toolgate holds is the local one, behind the wrapper that traces its calls.
    expect(internalsOf(tg).model.provider).toBe(new LocalModel().provider);
  });
});

describe('when two toolgates run on two Sequelize instances in one process', () => {
  let other: TestDatabase;
  let second: Toolgate;

  beforeAll(async () => {
    other = await createTestDatabase();
    second = createToolgate({ sequelize: other.sequelize, adminToken: ADMIN_TOKEN });
    await second.syncSystemToolkits();
  });

  afterAll(() => other.drop());

  test('then each reads and writes its own database', async () => {
    await second.toolkits.create({ name: 'Only in the second', member_tool_ids: ['email_analyzer'] });
    const firstNames = (await t.tg.toolkits.list()).map((k) => k.name);
    const secondNames = (await second.toolkits.list()).map((k) => k.name);
    expect(firstNames).toContain('Analysis');
    expect(firstNames).not.toContain('Only in the second');
    expect(secondNames).toContain('Only in the second');
    expect(secondNames).not.toContain('Analysis');
  });

  test('then the first one still serves its grants after the second was built', async () => {
    const res = await t.admin().get(`/api/agents/${agent}/tools`).query({ sender: 'mara@thescoop.com' }).expect(200);
    expect(res.body.tools).toEqual(['email_analyzer']);
    const created = await second.agents.create({ name: 'Second' });
    expect((await second.agents.get(created.id)).name).toBe('Second');
    expect((await t.tg.agents.list()).map((a) => a.name)).not.toContain('Second');
  });
});

describe('when a host grants from its own code', () => {
  test('then the services take patterns as written and store them normalized, and refuse a bad one with the reason', async () => {
    const kit = await t.tg.toolkits.create({ name: 'From code', member_tool_ids: ['email_analyzer'] });
    const attachment = await t.tg.attachments.attach(agent, {
      toolkit_id: kit.id,
      rules: [{ kind: 'allow', pattern: 'Mara+x@TheScoop.com'.replace('+x', '') }],
    });
    expect(attachment.rules).toEqual([expect.objectContaining({ kind: 'allow', pattern: 'mara@thescoop.com' })]);
    await expect(t.tg.attachments.addRule(agent, attachment.id, { kind: 'deny', pattern: '*thescoop.com' })).rejects.toMatchObject({
      status: 422,
      code: 'validation_error',
    });
  });
});

test('the module has the model class the library defaults to', () => {
  expect(typeof new LocalModel().agentStep).toBe('function');
});

describe('when the thread and approval options are wrong', () => {
  test.each([
    [{ agentRuns: { historyChars: 10 } }, 'ERR_TOOLGATE_AGENT_RUNS', /historyChars: 10.*from 1000 to 1000000/],
    [{ agentRuns: { messageIdDomain: 'not a host' } }, 'ERR_TOOLGATE_AGENT_RUNS', /messageIdDomain.*give a host name/],
    [{ approvals: { expiryMs: 1000 } }, 'ERR_TOOLGATE_APPROVALS', /expiryMs: 1000.*a minute/],
  ])('then createToolgate(%j) throws %s at construction, saying what to give', (options, code, message) => {
    expect(() => createToolgate({ sequelize: t.sequelize, adminToken: ADMIN_TOKEN, ...options })).toThrow(
      expect.objectContaining({ code, message: expect.stringMatching(message) }),
    );
  });
});

describe("when a host's own error handler reads the http-errors fields", () => {
  test('then a toolgate error carries status, statusCode and expose (true for a 4xx)', async () => {
    const app = express();
    app.post('/triage/:id', express.json(), t.tg.toolRun(), t.tg.requireTool('email_analyzer'), (_req, res) => {
      res.json({ granted: true });
    });
    app.use(
      (
        err: { status?: number; statusCode?: number; expose?: boolean; code?: string },
        _req: express.Request,
        res: express.Response,
        _next: express.NextFunction,
      ) => {
        res.status(err.statusCode ?? 500).json({ status: err.status, statusCode: err.statusCode, expose: err.expose, code: err.code });
      },
    );
    const res = await request(app).post(`/triage/${agent}`).send({ from: 'jane@acme.com' }).expect(403);
    expect(res.body).toEqual({ status: 403, statusCode: 403, expose: true, code: 'tool_forbidden' });
  });
});

describe('when the database is down under a host that mounts tg.router', () => {
  const down = createSequelize('postgres://127.0.0.1:1/none', { connectTimeoutMs: 500 });
  afterAll(() => down.close());
  const admin = (test: request.Test) => test.set('Authorization', `Bearer ${ADMIN_TOKEN}`);
  const routes = ['/api/agents', '/api/toolkits', '/api/agents/1/tool-calls'];

  /** A host with no tg.errorHandler(): Express's own final handler, or a handler of its own that renders HTML. */
  function hostWith(tg: Toolgate, handler: 'express default' | 'html of its own'): express.Express {
    const app = express();
    app.use('/api', tg.router);
    app.get('/api/host-boom', () => {
      throw new Error("the host's own failure");
    });
    if (handler === 'html of its own') {
      app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
        res.status(500).type('html').send(`<pre>${err.stack}</pre>`);
      });
    }
    return app;
  }

  test.each(['express default', 'html of its own'] as const)(
    "then with the %s handler, toolgate's own routes answer 503 unavailable as JSON, with a request id",
    async (handler) => {
      const tg = createToolgate({ sequelize: down, adminToken: ADMIN_TOKEN });
      const app = hostWith(tg, handler);
      for (const route of routes) {
        const res = await admin(request(app).get(route));
        expect({ route, status: res.status, type: res.headers['content-type'] }).toEqual({
          route,
          status: 503,
          type: expect.stringMatching(/application\/json/),
        });
        expect(res.body).toEqual({
          detail: expect.stringContaining('nothing was granted'),
          code: 'unavailable',
          request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        });
        expect(res.headers['x-request-id']).toBe(res.body.request_id);
        expect(res.headers['retry-after']).toBe('5');
      }
      await tg.close();
    },
  );

  test('then a request id the caller sent is the one answered', async () => {
    const tg = createToolgate({ sequelize: down, adminToken: ADMIN_TOKEN });
    const res = await admin(request(hostWith(tg, 'express default')).get('/api/agents'))
      .set('X-Request-Id', 'host-req-42')
      .expect(503);
    expect(res.body.request_id).toBe('host-req-42');
    await tg.close();
  });

  test("then an error of the host's own route, mounted after the router, still goes to the host's handler", async () => {
    const tg = createToolgate({ sequelize: down, adminToken: ADMIN_TOKEN });
    const res = await request(hostWith(tg, 'html of its own')).get('/api/host-boom').expect(500);
    expect(res.headers['content-type']).toMatch(/html/);
    expect(res.text).toContain("the host's own failure");
    await tg.close();
  });
});

describe('when a host process with the library defaults stops on SIGTERM without calling tg.close()', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-exit-'));
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  test('then it ends within a few seconds, once its server and its Sequelize are closed', async () => {
    const root = path.resolve(__dirname, '..', '..');
    const host = path.join(dir, 'host.ts');
    // The Express way to stop (server.close() on SIGTERM), with the host's own pool closed after it:
    // toolgate's listener, heartbeat and sweeper must not keep the process running.
    await fs.writeFile(
      host,
      `import express from ${JSON.stringify(require.resolve('express'))};
import { createSequelize } from ${JSON.stringify(path.join(root, 'src', 'db', 'connect'))};
import { createToolgate, internalsOf } from ${JSON.stringify(path.join(root, 'src', 'toolgate'))};
const sequelize = createSequelize(process.env.DATABASE_URL!);
const tg = createToolgate({ sequelize, adminToken: ${JSON.stringify(ADMIN_TOKEN)} });
const app = express();
app.post('/triage/:id', express.json(), tg.toolRun(), tg.requireTool('email_analyzer'), (_req, res) => { res.json({ ok: true }); });
const server = app.listen(0, '127.0.0.1', async () => {
  const { port } = server.address() as { port: number };
  const answer = await fetch('http://127.0.0.1:' + port + '/triage/${agent}', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"from":"mara@thescoop.com"}' });
  const policies = internalsOf(tg).runs.policies as unknown as { listenerState?: string; once?(e: string, f: () => void): void };
  if (policies?.listenerState === 'connecting') await new Promise<void>((resolve) => policies.once!('listening', resolve));
  console.log(JSON.stringify({ status: answer.status, listener: policies?.listenerState ?? 'none' }));
});
process.on('SIGTERM', () => server.close(() => void sequelize.close()));
`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', host], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: t.databaseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null; at: number }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
    );
    try {
      const ready = await new Promise<string>((resolve, reject) => {
        const late = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`the host did not answer in 20 s: ${stderr}`));
        }, 20_000);
        readline.createInterface({ input: child.stdout! }).once('line', (line) => {
          clearTimeout(late);
          resolve(line);
        });
        void exited.then((e) => reject(new Error(`the host exited early: ${JSON.stringify(e)} ${stderr}`)));
      });
      expect(JSON.parse(ready)).toEqual({ status: 200, listener: 'listening' });
      const sent = Date.now();
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const end = await exited;
      clearTimeout(timer);
      expect({ code: end.code, signal: end.signal, withinFiveSeconds: end.at - sent < 5_000 }).toEqual({
        code: 0,
        signal: null,
        withinFiveSeconds: true,
      });
    } finally {
      // A failed assertion must not leave the host running behind the test.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 60_000);
});

describe("when a host's setup code gets or creates its toolkit and agent by name, on every start", () => {
  test('then a second start finds what the first made, and says it did not create it', async () => {
    const first = await t.tg.toolkits.ensure({ name: 'Ensured kit', member_tool_ids: ['email_analyzer'] });
    const again = await t.tg.toolkits.ensure({ name: 'ensured KIT', member_tool_ids: ['email_analyzer'] });
    expect([first.created, again.created, again.id]).toEqual([true, false, first.id]);
    const agentFirst = await t.tg.agents.ensure({ name: 'Ensured agent', toolkit_ids: [] });
    const agentAgain = await t.tg.agents.ensure({ name: 'Ensured agent', toolkit_ids: [] });
    expect([agentFirst.created, agentAgain.created, agentAgain.id]).toEqual([true, false, agentFirst.id]);
    expect((await t.tg.agents.list()).filter((a) => a.name === 'Ensured agent')).toHaveLength(1);
  });

  test('then a name outside ASCII is found again too', async () => {
    for (const name of ['Équipe', 'İstanbul desk']) {
      const first = await t.tg.toolkits.ensure({ name, member_tool_ids: ['email_analyzer'] });
      const again = await t.tg.toolkits.ensure({ name, member_tool_ids: ['email_analyzer'] });
      expect({ name, created: [first.created, again.created], same: again.id === first.id }).toEqual({
        name,
        created: [true, false],
        same: true,
      });
      const agent = await t.tg.agents.ensure({ name, toolkit_ids: [] });
      expect((await t.tg.agents.ensure({ name, toolkit_ids: [] })).id).toBe(agent.id);
    }
  });

  test('then what an operator changed since is returned as it stands, never overwritten', async () => {
    const kit = await t.tg.toolkits.ensure({ name: 'Operator kit', member_tool_ids: ['email_analyzer'] });
    await t
      .admin()
      .patch(`/api/toolkits/${kit.id}`)
      .send({ member_tool_ids: ['email_analyzer', 'task_creator'], description: 'widened by an operator' })
      .expect(200);
    const again = await t.tg.toolkits.ensure({ name: 'Operator kit', member_tool_ids: ['email_analyzer'] });
    expect(again).toMatchObject({
      id: kit.id,
      created: false,
      member_tool_ids: ['email_analyzer', 'task_creator'],
      description: 'widened by an operator',
    });
    const bot = await t.tg.agents.ensure({ name: 'Operator agent', description: 'from code' });
    await t.admin().patch(`/api/agents/${bot.id}`).send({ description: 'an operator wrote this' }).expect(204);
    expect(await t.tg.agents.ensure({ name: 'Operator agent', description: 'from code' })).toMatchObject({
      id: bot.id,
      created: false,
      description: 'an operator wrote this',
    });
  });

  test('then starts racing each other make one of each', async () => {
    const kits = await Promise.all([1, 2, 3].map(() => t.tg.toolkits.ensure({ name: 'Raced kit', member_tool_ids: ['email_analyzer'] })));
    const agents = await Promise.all([1, 2, 3].map(() => t.tg.agents.ensure({ name: 'Raced agent', toolkit_ids: [] })));
    expect(new Set(kits.map((k) => k.id)).size).toBe(1);
    expect(kits.filter((k) => k.created)).toHaveLength(1);
    expect(new Set(agents.map((a) => a.id)).size).toBe(1);
    expect(agents.filter((a) => a.created)).toHaveLength(1);
  });

  test('then a typo in the members is refused even when the toolkit exists, and two agents of one name are a conflict', async () => {
    await t.tg.toolkits.ensure({ name: 'Typo kit', member_tool_ids: ['email_analyzer'] });
    await expect(t.tg.toolkits.ensure({ name: 'Typo kit', member_tool_ids: ['email_analyzr'] })).rejects.toMatchObject({
      status: 422,
      code: 'validation_error',
    });
    await t.tg.agents.create({ name: 'Twin', toolkit_ids: [] });
    await t.tg.agents.create({ name: 'Twin', toolkit_ids: [] });
    await expect(t.tg.agents.ensure({ name: 'Twin', toolkit_ids: [] })).rejects.toMatchObject({
      status: 409,
      code: 'conflict',
      message: expect.stringContaining('2 agents are named "Twin"'),
    });
  });
});
