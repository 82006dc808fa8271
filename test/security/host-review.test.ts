// The hostile review of issue 28, each finding reproduced over HTTP and named by the behaviour that
// now holds (docs/SECURITY.md lists them). Finding 5: a host route written as the README showed it
// took any From at its word, said nothing of it, and answered any Host. Finding 9: an
// Idempotency-Key was scoped by the path as spelled, so one key ran once per spelling.
import { QueryTypes } from 'sequelize';
import express from 'express';
import request from 'supertest';
import { senderAsGiven } from '../../middleware/sender-check';
import { currentRun } from '../../middleware/current-run';
import { createToolgate, type Toolgate, type ToolgateOptions } from '../../src/toolgate';
import { SCOOP_TOOLS } from '../../src/app/demo/scoop-tools';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

const AUTHSERV_ID = 'mx.thescoop.com';

let t: TestApp;
let sundae: number;

beforeAll(async () => {
  t = await createTestApp();
  const triage = await makeToolkit(t, 'Triage', ['email_analyzer', 'lookup_order']);
  sundae = await makeAgent(t, { name: 'Sundae', toolkit_ids: [] });
  await t
    .admin()
    .post(`/api/agents/${sundae}/toolkits`)
    .send({
      toolkit_id: triage,
      rules: [{ kind: 'allow', pattern: '*@thescoop.com' }],
    })
    .expect(201);
});

afterAll(() => t.close());

const records = () =>
  t.sequelize.query<{
    tool_id: string;
    status: string;
    routing_key: string | null;
  }>('SELECT tool_id, status, routing_key FROM tool_calls WHERE agent_id = :agent ORDER BY id', {
    replacements: { agent: sundae },
    type: QueryTypes.SELECT,
  });

/** A toolgate on the test database, built as a host builds one, with a logger that keeps its warnings. */
function hostToolgate(options: Partial<ToolgateOptions> = {}): {
  tg: Toolgate;
  warnings: unknown[][];
} {
  const warnings: unknown[][] = [];
  const logger = {
    error: () => undefined,
    warn: (...args: unknown[]) => void warnings.push(args),
  };
  return {
    tg: createToolgate({
      sequelize: t.sequelize,
      adminToken: ADMIN_TOKEN,
      tools: SCOOP_TOOLS,
      logger,
      ...options,
    }),
    warnings,
  };
}

/** The README's host route, as examples/host-app.ts mounts it. */
function readmeApp(tg: Toolgate): express.Express {
  const app = express();
  app.use('/api', tg.router);
  app.post('/agents/:id/triage', tg.checkHost(), express.json(), tg.toolRun(), tg.requireTool('email_analyzer'), async (req, res) => {
    const run = currentRun(req);
    res.json({ tools: run.tools, routing_key: run.routingKey });
  });
  app.use(tg.errorHandler());
  return app;
}

describe('finding 5: senders taken as given, unsaid', () => {
  test('when a toolgate is built with no sender authentication, then it warns once, at construction, through its logger', async () => {
    const { tg, warnings } = hostToolgate();
    expect(warnings).toEqual([[{ code: 'TOOLGATE_SENDERS_AS_GIVEN' }, expect.stringContaining('every sender is taken at its word')]]);
    await request(readmeApp(tg)).post(`/agents/${sundae}/triage`).send({ from: 'mara@thescoop.com' }).expect(200);
    expect(warnings).toHaveLength(1);
    await tg.close();
  });

  // The first toolgate of this file built without a logger: the process warning is said once per process.
  test('when toolgates with no logger are built with no sender authentication, then the first is a process warning with a stable code, once', async () => {
    const emitted = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const first = createToolgate({
        sequelize: t.sequelize,
        adminToken: ADMIN_TOKEN,
      });
      const second = createToolgate({
        sequelize: t.sequelize,
        adminToken: ADMIN_TOKEN,
      });
      expect(emitted.mock.calls).toEqual([
        [expect.stringContaining('Give authservId'), { type: 'ToolgateWarning', code: 'TOOLGATE_SENDERS_AS_GIVEN' }],
      ]);
      await Promise.all([first.close(), second.close()]);
    } finally {
      emitted.mockRestore();
    }
  });

  test.each([
    ['authservId', { authservId: AUTHSERV_ID }],
    ['senderCheck: senderAsGiven, chosen on purpose', { senderCheck: senderAsGiven }],
  ])('when a toolgate is built with %s, then it does not warn', async (_case, options) => {
    const { tg, warnings } = hostToolgate(options);
    expect(warnings).toEqual([]);
    await tg.close();
  });

  describe('when a host route is configured as the README shows (authservId, checkHost)', () => {
    let tg: Toolgate;
    let app: express.Express;
    beforeAll(() => {
      ({ tg } = hostToolgate({ authservId: AUTHSERV_ID }));
      app = readmeApp(tg);
    });
    afterAll(() => tg.close());

    const triage = (from: string, authentication_results?: string[]) =>
      request(app)
        .post(`/agents/${sundae}/triage`)
        .send({
          from,
          ...(authentication_results ? { authentication_results } : {}),
        });

    test('then a forged From, with no Authentication-Results of our server, is refused, and recorded with no routing key', async () => {
      const before = (await records()).length;
      const res = await triage('Mara <mara@thescoop.com>').expect(403);
      expect(res.body).toMatchObject({
        code: 'tool_forbidden',
        detail: expect.stringContaining('no sender address its gate could check'),
      });
      expect((await records()).slice(before)).toEqual([{ tool_id: 'email_analyzer', status: 'denied', routing_key: null }]);
    });

    test('then a From vouched for by another server, by a subdomain of ours, or by a pass in a comment beside our fail, is refused', async () => {
      await triage('mara@thescoop.com', ['mx.evil.example; dmarc=pass header.from=thescoop.com']).expect(403);
      await triage('mara@thescoop.com', [`${AUTHSERV_ID}; dmarc=fail (dmarc=pass) header.from=thescoop.com`]).expect(403);
      await triage('mara@thescoop.com', [`evil.${AUTHSERV_ID}; dmarc=pass header.from=thescoop.com`]).expect(403);
    });

    test('then a From our server vouches for (dmarc=pass for its domain) is served under its routing key', async () => {
      const res = await triage('Mara <Mara+billing@TheScoop.com>', [`${AUTHSERV_ID}; dmarc=pass header.from=thescoop.com`]).expect(200);
      expect(res.body).toEqual({
        tools: ['email_analyzer', 'lookup_order'],
        routing_key: 'mara@thescoop.com',
      });
    });

    test('then a Host a web page could rebind to 127.0.0.1 is refused 421 host_not_allowed, before anything runs', async () => {
      const before = (await records()).length;
      for (const host of ['evil.example', 'evil.example:3000']) {
        const res = await triage('mara@thescoop.com', [`${AUTHSERV_ID}; dmarc=pass header.from=thescoop.com`])
          .set('Host', host)
          .expect(421);
        expect(res.body).toEqual({
          code: 'host_not_allowed',
          detail: expect.stringContaining('checkHost({ allowedHosts })'),
        });
      }
      const forwarded = await triage('mara@thescoop.com').set('Host', 'localhost').set('X-Forwarded-Host', 'evil.example').expect(421);
      expect(forwarded.body.code).toBe('host_not_allowed');
      expect(await records()).toHaveLength(before);
    });

    test('then localhost, a .localhost name and an IP address are answered', async () => {
      for (const host of ['localhost:3000', 'shop.localhost', '127.0.0.1:3000', '[::1]:3000', '10.0.0.7']) {
        await triage('mara@thescoop.com', [`${AUTHSERV_ID}; dmarc=pass header.from=thescoop.com`])
          .set('Host', host)
          .expect(200);
      }
    });
  });

  test('when checkHost names the hosts the route is reached by, then those are answered, and others are still refused', async () => {
    const { tg } = hostToolgate({ senderCheck: senderAsGiven });
    const app = express().post('/agents/:id/triage', tg.checkHost({ allowedHosts: ['Shop.Internal'] }), (_req, res) => {
      res.json({ reached: true });
    });
    app.use(tg.errorHandler());
    await request(app).post(`/agents/${sundae}/triage`).set('Host', 'shop.internal:8080').expect(200);
    await request(app).post(`/agents/${sundae}/triage`).set('Host', 'shop.internal.evil.example').expect(421);
    await tg.close();
  });

  test.each([[{ allowedHosts: ['https://shop.internal'] }], [{ allowedHosts: 'shop.internal' }], [{ allowedHost: ['shop.internal'] }]])(
    'when checkHost is given %j, then it is refused when built, with ERR_TOOLGATE_CHECK_HOST',
    async (options) => {
      const { tg } = hostToolgate({ senderCheck: senderAsGiven });
      expect(() => tg.checkHost(options as never)).toThrow(expect.objectContaining({ code: 'ERR_TOOLGATE_CHECK_HOST' }));
      await tg.close();
    },
  );
});

describe("finding 9: an Idempotency-Key scoped by the path's spelling", () => {
  const lookups = async () => (await records()).filter((r) => r.tool_id === 'lookup_order').length;
  const dispatch = (path: string, key: string) =>
    t
      .client()
      .post(path)
      .set('Idempotency-Key', key)
      .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'mara@thescoop.com' });

  test('when one key is sent to tool-calls, tool-calls/ and TOOL-CALLS, then the call runs once, and the second and third are replays', async () => {
    const before = await lookups();
    const spellings = [`/api/agents/${sundae}/tool-calls`, `/api/agents/${sundae}/tool-calls/`, `/api/agents/${sundae}/TOOL-CALLS`];
    const answers = [];
    for (const path of spellings) answers.push(await dispatch(path, 'k-spelling').expect(200));
    expect(await lookups()).toBe(before + 1);
    expect(answers.map((a) => a.headers['idempotent-replayed'])).toEqual([undefined, 'true', 'true']);
    expect(answers[1]!.body).toEqual(answers[0]!.body);
    expect(answers[2]!.body).toEqual(answers[0]!.body);
  });

  test('when the mount path is spelled in capitals, or the agent id percent-encoded, then it is the same route and the key replays', async () => {
    const before = await lookups();
    await dispatch(`/api/agents/${sundae}/tool-calls`, 'k-mount').expect(200);
    const encoded = `/api/agents/${[...String(sundae)].map((digit) => `%3${digit}`).join('')}/tool-calls`;
    for (const path of [`/API/agents/${sundae}/tool-calls`, `/Api/Agents/${sundae}/Tool-Calls/`, encoded]) {
      const res = await dispatch(path, 'k-mount').expect(200);
      expect({ path, replayed: res.headers['idempotent-replayed'] }).toEqual({ path, replayed: 'true' });
    }
    expect(await lookups()).toBe(before + 1);
  });

  test('when the path is spelled as declared, then the key is stored under the scope earlier versions gave it, so a retry across a deploy replays', async () => {
    await dispatch(`/api/agents/${sundae}/tool-calls`, 'k-canonical').expect(200);
    const [row] = await t.sequelize.query<{ scope: string }>("SELECT scope FROM idempotency_keys WHERE key = 'k-canonical'", {
      type: QueryTypes.SELECT,
    });
    expect(row!.scope).toMatch(new RegExp(`^[0-9a-f]{24} POST /api/agents/${sundae}/tool-calls$`));
  });
});
