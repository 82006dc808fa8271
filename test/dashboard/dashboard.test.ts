// The dashboard's guarantees that a browser run does not show as directly: where it may be served,
// what its cookie and CSP are, sessions shared by instances and ended by a new admin token, CSRF,
// escaping, stale members, a job's progress, and the sign-in budget, shared by instances.
import { QueryTypes } from 'sequelize';
import express from 'express';
import request from 'supertest';
import { dashboardRouter } from '../../src/app/dashboard/dashboard-router';
import { createApp } from '../../src/app/app';
import { createLogger } from '../../src/app/logger';
import { createToolgate, internalsOf } from '../../src/toolgate';
import { ADMIN_TOKEN, createSecondInstance, createTestApp, type TestApp } from '../support/app';
import { signedIn, visitor } from './session';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ dashboard: true });
});
afterAll(() => t.close());

describe('where the dashboard is served', () => {
  test('when it is reached over plain HTTP by another host name, then it refuses with what to change, and sets no cookie', async () => {
    const res = await request(t.app).get('/admin/sign-in').set('Host', 'toolgate.example.com');
    expect(res.status).toBe(403);
    expect(res.text).toContain('TOOLGATE_TRUST_PROXY');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  test('when a client claims HTTPS without a trusted proxy, then the claim is ignored', async () => {
    const res = await request(t.app).get('/admin/sign-in').set('Host', 'toolgate.example.com').set('X-Forwarded-Proto', 'https');
    expect(res.status).toBe(403);
  });

  test('when a trusted proxy says the browser came over HTTPS, then signing in works', async () => {
    const app = createApp(t.tg, { logger: createLogger(false), trustProxy: 'loopback', dashboard: { adminToken: ADMIN_TOKEN } });
    const v = visitor(app);
    const headers = { host: 'toolgate.example.com', 'x-forwarded-proto': 'https' };
    const page = await v.get('/admin/sign-in', headers);
    const token = /name="_csrf" value="([0-9a-f.]+)"/.exec(page.text)![1]!;
    expect((await v.post('/admin/sign-in', { _csrf: token, token: ADMIN_TOKEN }, headers)).status).toBe(303);
    expect((await v.get('/admin/agents', headers)).status).toBe(200);
  });

  test('when a page is served, then its cookies are Secure, HttpOnly, SameSite=Strict and host-only, and its CSP allows no script', async () => {
    const res = await request(t.app).get('/admin/sign-in');
    expect(res.headers['set-cookie']).toEqual([
      expect.stringMatching(/^__Host-toolgate-sign-in=[0-9a-f]+\.[0-9a-f]+; Path=\/; HttpOnly; Secure; SameSite=Strict$/),
    ]);
    const v = visitor(t.app);
    const signIn = await v.post('/admin/sign-in', { _csrf: await v.token('/admin/sign-in'), token: ADMIN_TOKEN });
    expect(signIn.headers['set-cookie']).toContainEqual(
      expect.stringMatching(/^__Host-toolgate-admin=.*; Path=\/; Expires=.*; HttpOnly; Secure; SameSite=Strict$/),
    );
    expect(signIn.headers['set-cookie']).toContainEqual(
      expect.stringMatching(
        /^__Host-toolgate-sign-in=; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Strict$/,
      ),
    );
    const csp = res.headers['content-security-policy']!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('script-src');
    expect(res.text).not.toContain('<script');
  });
});

describe('sessions', () => {
  test('when signed out, then a page leads to sign-in and back to the page after it', async () => {
    const v = visitor(t.app);
    const res = await v.get('/admin/toolkits');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/admin/sign-in?next=%2Fadmin%2Ftoolkits');
    const signIn = await v.post('/admin/sign-in', {
      _csrf: await v.token(res.headers.location!),
      token: ADMIN_TOKEN,
      next: '/admin/toolkits',
    });
    expect(signIn.headers.location).toBe('/admin/toolkits');
  });

  test('when sign-in is asked to lead elsewhere, then it leads to the agents instead', async () => {
    const v = visitor(t.app);
    const signIn = await v.post('/admin/sign-in', {
      _csrf: await v.token('/admin/sign-in'),
      token: ADMIN_TOKEN,
      next: '//evil.example/admin/',
    });
    expect(signIn.headers.location).toBe('/admin/agents');
  });

  test('when signing in, then the session id changes, so an id planted before is worth nothing', async () => {
    const v = visitor(t.app);
    const token = await v.token('/admin/sign-in');
    const before = v.cookie;
    await v.post('/admin/sign-in', { _csrf: token, token: ADMIN_TOKEN });
    expect(v.cookie).not.toBe(before);
    expect((await request(t.app).get('/admin/agents').set('cookie', before!)).status).toBe(303);
  });

  test('when another instance on the same database gets the cookie, then it is signed in there too; with a new admin token, it is not', async () => {
    const v = await signedIn(t.app);
    const sameToken = createApp(createToolgate({ sequelize: t.sequelize, adminToken: ADMIN_TOKEN }), {
      logger: createLogger(false),
      dashboard: { adminToken: ADMIN_TOKEN },
    });
    expect((await request(sameToken).get('/admin/agents').set('cookie', v.cookie!)).status).toBe(200);
    const rotated = 'a-brand-new-admin-token-0123456789';
    const newToken = createApp(createToolgate({ sequelize: t.sequelize, adminToken: rotated }), {
      logger: createLogger(false),
      dashboard: { adminToken: rotated },
    });
    expect((await request(newToken).get('/admin/agents').set('cookie', v.cookie!)).status).toBe(303);
    const rows = await t.sequelize.query<{ n: string }>('SELECT count(*) AS n FROM admin_sessions', { type: QueryTypes.SELECT });
    expect(Number(rows[0]!.n)).toBeGreaterThan(0);
  });

  test('when an operator signs out, then the session is gone from the database, and the cookie with it', async () => {
    const v = await signedIn(t.app);
    const cookie = v.cookie!;
    const out = await v.post('/admin/sign-out', { _csrf: await v.token('/admin/agents') });
    expect(out.status).toBe(303);
    expect((await request(t.app).get('/admin/agents').set('cookie', cookie)).status).toBe(303);
  });

  test('when wrong tokens are tried again and again, then sign-in stops trying them for a while, even the right one', async () => {
    // A database of its own: the budget is counted there, and this address ends up blocked.
    const own = await createTestApp({ dashboard: true });
    try {
      const v = visitor(own.app);
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++)
        statuses.push((await v.post('/admin/sign-in', { _csrf: await v.token('/admin/sign-in'), token: `wrong-token-${i}` })).status);
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
      expect(statuses[10]).toBe(429);
      expect((await v.post('/admin/sign-in', { _csrf: await v.token('/admin/sign-in'), token: ADMIN_TOKEN })).status).toBe(429);
    } finally {
      await own.close();
    }
  });
});

describe('when wrong tokens are spread over two instances of one database', () => {
  const wrong = async (v: ReturnType<typeof visitor>, i: number) =>
    (await v.post('/admin/sign-in', { _csrf: await v.token('/admin/sign-in'), token: `wrong-token-${i}` })).status;

  test('then the two share one budget: an address gets ten wrong tokens in all, not ten on each', async () => {
    const a = await createTestApp({ dashboard: true });
    const b = await createSecondInstance(a);
    try {
      const [va, vb] = [visitor(a.app), visitor(createApp(b.tg, { logger: createLogger(false), dashboard: { adminToken: ADMIN_TOKEN } }))];
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push(await wrong(i % 2 ? vb : va, i));
      expect(statuses).toEqual(Array(10).fill(401));
      expect(await wrong(va, 10)).toBe(429);
      expect(await wrong(vb, 11)).toBe(429);
    } finally {
      await b.close();
      await a.close();
    }
  });

  test('then an operator who counts callers in memory gets a budget per instance, as the option says', async () => {
    const a = await createTestApp({ dashboard: true, rateLimit: { windowMs: 60_000, limit: 1_000, store: 'memory' } });
    try {
      const other = createApp(a.tg, { logger: createLogger(false), dashboard: { adminToken: ADMIN_TOKEN } });
      const [va, vb] = [visitor(a.app), visitor(other)];
      for (let i = 0; i < 10; i++) expect(await wrong(va, i)).toBe(401);
      expect(await wrong(va, 10)).toBe(429);
      expect(await wrong(vb, 11)).toBe(401);
    } finally {
      await a.close();
    }
  });
});

describe('where the dashboard is mounted', () => {
  test('when it is mounted under another path, then its pages name their styles and links under that path', async () => {
    const app = express();
    app.use('/ops', dashboardRouter(internalsOf(t.tg), { adminToken: ADMIN_TOKEN, logger: createLogger(false) }));
    const page = await request(app).get('/ops/sign-in').expect(200);
    expect(page.text).toContain('href="/ops/assets/dashboard.css"');
    expect(page.text).not.toContain('/admin/');
    await request(app).get('/ops/assets/dashboard.css').expect(200);
    const missing = await request(app).get('/ops/no-such-page').expect(303);
    expect(missing.headers.location).toMatch(/^\/ops\/sign-in/);
  });
});

describe('forms', () => {
  test("when a form is posted without its CSRF token, or with another session's, then it is refused and nothing changes", async () => {
    const v = await signedIn(t.app);
    const other = await signedIn(t.app);
    const without = await v.post('/admin/toolkits', { name: 'Forged', member: 'send_email' });
    const foreign = await v.post('/admin/toolkits', {
      _csrf: await other.token('/admin/toolkits/new'),
      name: 'Forged',
      member: 'send_email',
    });
    expect([without.status, foreign.status]).toEqual([403, 403]);
    expect(without.text).toContain('This form was not sent from a dashboard page');
    expect((await t.tg.toolkits.list()).map((k) => k.name)).not.toContain('Forged');
  });

  test('when a form is posted after the session has ended, then the operator is told to sign in again, not that the form looks forged, and nothing changes', async () => {
    const v = await signedIn(t.app);
    const token = await v.token('/admin/toolkits/new');
    await t.sequelize.query('DELETE FROM admin_sessions');
    const res = await v.post('/admin/toolkits', { _csrf: token, name: 'After the end', member: 'send_email' });
    expect(res.status).toBe(401);
    expect(res.text).toContain('You are signed out');
    expect((await t.tg.toolkits.list()).map((k) => k.name)).not.toContain('After the end');
  });

  test('when a value holds markup, then every page shows it as text', async () => {
    const name = '<img src=x onerror=alert(1)> "Quoted" & co';
    await t.tg.toolkits.create({ name, description: '<script>alert(2)</script>', member_tool_ids: ['send_email'] });
    const v = await signedIn(t.app);
    const page = await v.get('/admin/toolkits');
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).not.toContain('<script>alert(2)');
    expect(page.text).toContain('&lt;img src=x onerror=alert(1)> &quot;Quoted&quot; &amp; co');
  });

  test('when a toolkit names a tool that is gone from the code, then its edit page shows that member as stale, checked, to be removed', async () => {
    const kit = await t.tg.toolkits.create({ name: 'Faxes', member_tool_ids: ['send_email'] });
    await t.sequelize.query(`UPDATE toolkits SET member_tool_ids = array_append(member_tool_ids, 'fax_order') WHERE id = :id`, {
      replacements: { id: kit.id },
    });
    const v = await signedIn(t.app);
    const page = await v.get(`/admin/toolkits/${kit.id}`);
    expect(page.text).toMatch(/<input type="checkbox" id="member-fax_order" name="member" value="fax_order" checked/);
    expect(page.text).toContain('fax_order (no longer registered)');
    const saved = await v.post(`/admin/toolkits/${kit.id}`, {
      _csrf: await v.token(`/admin/toolkits/${kit.id}`),
      name: 'Faxes',
      member: ['send_email'],
    });
    expect(saved.status).toBe(303);
    expect((await t.tg.toolkits.get(kit.id)).member_tool_ids).toEqual(['send_email']);
  });

  test('when a system toolkit is listed, then it is marked and offers no delete; a forged delete is refused', async () => {
    const v = await signedIn(t.app);
    const allTools = (await t.tg.toolkits.list()).find((k) => k.system_key === 'all_tools')!;
    const page = await v.get('/admin/toolkits');
    expect(page.text).toContain('System: every registered tool');
    expect(page.text).not.toContain(`/admin/toolkits/${allTools.id}/delete`);
    const forged = await v.post(`/admin/toolkits/${allTools.id}/delete`, { _csrf: await v.token('/admin/toolkits') });
    expect(forged.status).toBe(409);
    expect((await t.tg.toolkits.get(allTools.id)).name).toBe('All Tools');
  });

  test('when a toolkit name is taken, then the form comes back with the reason beside Name and the checklist as it was sent', async () => {
    const v = await signedIn(t.app);
    const res = await v.post('/admin/toolkits', {
      _csrf: await v.token('/admin/toolkits/new'),
      name: 'all tools',
      member: ['send_email', 'lookup_order'],
    });
    expect(res.status).toBe(409);
    expect(res.text).toMatch(/id="name-error">A toolkit named &quot;all tools&quot; already exists/);
    expect(res.text).toMatch(/id="member-send_email" name="member" value="send_email" checked/);
    expect(res.text).toMatch(/id="member-lookup_order" name="member" value="lookup_order" checked/);
  });
});

describe('agents', () => {
  test('when New agent is sent with two toolkits checked, then the agent holds exactly those, open and off for scheduled runs', async () => {
    const v = await signedIn(t.app);
    const form = await v.get('/admin/agents/new');
    const defaults = (await t.tg.toolkits.list()).find((k) => k.system_key === 'default_tools')!;
    const faxes = await t.tg.toolkits.create({ name: 'Desk kit', member_tool_ids: ['lookup_order'] });
    expect(form.text).toMatch(new RegExp(`id="toolkit-${defaults.id}" name="toolkit" value="${defaults.id}" checked`));
    const created = await v.post('/admin/agents', {
      _csrf: await v.token('/admin/agents/new'),
      name: 'Desk',
      description: '',
      toolkit: [String(defaults.id), String(faxes.id)],
    });
    expect(created.status).toBe(303);
    const id = Number(/\/admin\/agents\/(\d+)$/.exec(created.headers.location!)![1]);
    const held = await t.tg.attachments.list(id);
    expect(held.map((a) => [a.toolkit.name, a.rules.length, a.allow_proactive])).toEqual([
      ['Default Tools', 0, false],
      ['Desk kit', 0, false],
    ]);
  });

  test('when New agent is sent without a name, then the form comes back with the reason beside Name', async () => {
    const v = await signedIn(t.app);
    const res = await v.post('/admin/agents', { _csrf: await v.token('/admin/agents/new'), name: '   ', description: 'Nameless' });
    expect(res.status).toBe(422);
    expect(res.text).toMatch(/id="name-error">Must not be empty\./);
    expect(res.text).toContain('>Nameless</textarea>');
  });
});

describe("an agent's access rules", () => {
  test('when an operator adds one on the agent page, then it is stored normalized and listed', async () => {
    const agent = await t.tg.agents.create({ name: 'Scout' });
    const v = await signedIn(t.app);
    const page = await v.get(`/admin/agents/${agent.id}`);
    expect(page.text).toContain('<h2 id="access-rules">Access rules</h2>');
    const added = await v.post(`/admin/agents/${agent.id}/access-rules`, {
      _csrf: await v.token(`/admin/agents/${agent.id}`),
      kind: 'allow',
      pattern: '*@TheScoop.com',
    });
    expect(added.status).toBe(303);
    expect(await t.tg.accessRules.list(agent.id)).toEqual([expect.objectContaining({ kind: 'allow', pattern: '*@thescoop.com' })]);
    expect((await v.get(`/admin/agents/${agent.id}`)).text).toContain('<code>*@thescoop.com</code>');
  });

  test('when the pattern is refused, then the reason shows beside Access pattern and nothing is stored', async () => {
    const agent = await t.tg.agents.create({ name: 'Scout 2' });
    const v = await signedIn(t.app);
    const res = await v.post(`/admin/agents/${agent.id}/access-rules`, {
      _csrf: await v.token(`/admin/agents/${agent.id}`),
      kind: 'allow',
      pattern: '*thescoop.com',
    });
    expect(res.status).toBe(422);
    expect(res.text).toMatch(/id="access-pattern-error">The pattern &quot;\*thescoop\.com&quot; has no @/);
    expect(await t.tg.accessRules.list(agent.id)).toEqual([]);
  });

  test('when Who gets what checks a sender the access rules refuse, then it says so, and that nothing is offered', async () => {
    const agent = await t.tg.agents.create({ name: 'Guarded' });
    await t.tg.accessRules.add(agent.id, { kind: 'allow', pattern: '*@thescoop.com' });
    const v = await signedIn(t.app);
    const refused = await v.get(`/admin/who-gets-what?agent=${agent.id}&sender=jane%40acme.com`);
    expect(refused.text).toContain(
      'Guarded has allow rules and none matches this sender: Guarded refuses the message, and nothing is offered.',
    );
    const admitted = await v.get(`/admin/who-gets-what?agent=${agent.id}&sender=mara%40thescoop.com`);
    expect(admitted.text).toContain("Guarded's access rule allow *@thescoop.com matches this sender: Guarded handles the message.");
  });

  test('when an operator removes one and confirms it, then it is gone', async () => {
    const agent = await t.tg.agents.create({ name: 'Scout 3' });
    const rule = await t.tg.accessRules.add(agent.id, { kind: 'deny', pattern: 'x@y.com' });
    const v = await signedIn(t.app);
    const token = await v.token(`/admin/agents/${agent.id}`);
    // Remove leads to its confirmation page first; only that page's Remove removes.
    const asked = await v.post(`/admin/agents/${agent.id}/access-rules/${rule.id}/delete`, { _csrf: token });
    expect(asked.status).toBe(200);
    expect(asked.text).toContain('Remove the access rule deny x@y.com?');
    expect((await t.tg.accessRules.list(agent.id)).map((r) => r.id)).toEqual([rule.id]);
    const res = await v.post(`/admin/agents/${agent.id}/access-rules/${rule.id}/delete`, { _csrf: token, confirmed: 'yes' });
    expect(res.status).toBe(303);
    expect(await t.tg.accessRules.list(agent.id)).toEqual([]);
  });
});

describe('the enabled_tools migration page', () => {
  test('when a job is running over a large table, then its page shows how far it is and reloads itself', async () => {
    const [job] = await t.sequelize.query<{ id: number }>(
      `INSERT INTO admin_jobs (kind, status, progress) VALUES ('apply', 'running', '{"phase": "plan", "done": 24000, "total": 100000}') RETURNING id`,
      { type: QueryTypes.SELECT },
    );
    const v = await signedIn(t.app);
    const page = await v.get(`/admin/migration/jobs/${job!.id}`);
    expect(page.text).toContain('<meta http-equiv="refresh" content="1"/>');
    expect(page.text).toContain('Planning: 24,000 of 100,000 agents');
    expect(page.text).toMatch(/<progress id="job-progress" max="100000" value="24000">24%<\/progress>/);
  });

  test('when an apply is started and then undone, then each shows its report', async () => {
    await t.tg.agents.create({ name: 'Old desk', enabled_tools: 'email_analyzer' });
    const v = await signedIn(t.app);
    const follow = async (mode: string) => {
      const started = await v.post('/admin/migration/jobs', { _csrf: await v.token('/admin/migration'), mode });
      expect(started.status).toBe(303);
      for (let i = 0; i < 100; i++) {
        const page = await v.get(started.headers.location!);
        if (!page.text.includes('http-equiv="refresh"')) return page.text;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`${mode} did not finish`);
    };
    expect(await follow('apply')).toContain('Report: committed');
    expect(await follow('undo')).toContain('Removed 1 legacy grant from 1 agent, and 1 legacy toolkit.');
  });
});
