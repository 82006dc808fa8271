// Signing in to the dashboard, and out: the CSRF checks hold whatever the case or trailing slash of
// the path that reaches a form's handler, a refused sign-in form spends none of the budget of wrong
// tokens, and visitors who never sign in leave no session behind.
import { QueryTypes, type Sequelize } from 'sequelize';
import request from 'supertest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../support/app';
import { signedIn, visitor } from './session';

// Paths Express routes to the sign-in form (its routing ignores case and a trailing slash).
const SIGN_IN_PATHS = ['/admin/sign-in', '/admin/SIGN-IN', '/admin/sign-in/', '/admin/Sign-In/'];

async function sessionRows(sequelize: Sequelize): Promise<number> {
  const rows = await sequelize.query<{ n: string }>('SELECT count(*) AS n FROM admin_sessions', { type: QueryTypes.SELECT });
  return Number(rows[0]!.n);
}

describe('CSRF checks and sessions around signing in', () => {
  // A database of its own for each test: the budget of wrong tokens is counted there.
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ dashboard: true });
  });
  afterEach(() => t.close());

  test('when wrong tokens are posted without a CSRF token, whatever the case or trailing slash of the path, then each is refused (403) and the budget of wrong tokens is untouched', async () => {
    const v = visitor(t.app);
    await v.get('/admin/sign-in');
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++)
      statuses.push((await v.post(SIGN_IN_PATHS[i % SIGN_IN_PATHS.length]!, { token: `wrong-token-${i}` })).status);
    expect(statuses).toEqual(Array(12).fill(403));
    const signIn = await v.post('/admin/sign-in', { _csrf: await v.token('/admin/sign-in'), token: ADMIN_TOKEN });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.location).toBe('/admin/agents');
  });

  test('when the right admin token is posted without a CSRF token, whatever the case or trailing slash of the path, then nobody is signed in', async () => {
    for (const path of SIGN_IN_PATHS) {
      const v = visitor(t.app);
      await v.get('/admin/sign-in');
      const res = await v.post(path, { token: ADMIN_TOKEN, next: '/admin/toolkits' });
      expect([path, res.status]).toEqual([path, 403]);
      expect(res.text).toContain('This form was not sent from a dashboard page');
      expect((await v.get('/admin/agents')).status).toBe(303);
    }
    expect(await sessionRows(t.sequelize)).toBe(0);
  });

  test("when the form's token is posted without the cookie it came with, as another site's form would be, then sign-in refuses it", async () => {
    const v = visitor(t.app);
    const token = await v.token('/admin/sign-in');
    const res = await request(t.app).post('/admin/sign-in').type('form').send({ _csrf: token, token: ADMIN_TOKEN });
    expect(res.status).toBe(403);
    expect(res.headers['set-cookie'] ?? []).not.toContainEqual(expect.stringMatching(/^__Host-toolgate-admin=/));
  });

  test('when a made-up token is posted both as the field and as the cookie, then sign-in refuses it', async () => {
    const made = `${'ab'.repeat(32)}.${'cd'.repeat(32)}`;
    const res = await request(t.app)
      .post('/admin/sign-in')
      .set('cookie', `__Host-toolgate-sign-in=${made}`)
      .type('form')
      .send({ _csrf: made, token: ADMIN_TOKEN });
    expect(res.status).toBe(403);
  });

  test("when the sign-in page is fetched 200 times and wrong tokens are tried, then no session is stored; signing in with the form's token stores one", async () => {
    for (let i = 0; i < 200; i++) expect((await request(t.app).get('/admin/sign-in')).status).toBe(200);
    const v = visitor(t.app);
    expect((await v.post('/admin/sign-in', { _csrf: await v.token('/admin/sign-in'), token: 'wrong-token' })).status).toBe(401);
    expect(await sessionRows(t.sequelize)).toBe(0);
    expect((await v.post('/admin/sign-in', { _csrf: await v.token('/admin/sign-in'), token: ADMIN_TOKEN })).status).toBe(303);
    expect(await sessionRows(t.sequelize)).toBe(1);
    expect((await v.get('/admin/agents')).status).toBe(200);
  });

  test('when a signed-in session posts a form or signs out without its token, whatever the case or trailing slash of the path, then it is refused and the session stays', async () => {
    const v = await signedIn(t.app);
    const forged = [
      await v.post('/admin/TOOLKITS', { name: 'Forged', member: 'send_email' }),
      await v.post('/admin/toolkits/', { name: 'Forged', member: 'send_email' }),
      await v.post('/admin/SIGN-OUT/', {}),
    ];
    expect(forged.map((res) => res.status)).toEqual([403, 403, 403]);
    expect((await t.tg.toolkits.list()).map((k) => k.name)).not.toContain('Forged');
    expect((await v.get('/admin/agents')).status).toBe(200);
    expect((await v.post('/admin/Sign-Out', { _csrf: await v.token('/admin/agents') })).status).toBe(303);
    expect((await v.get('/admin/agents')).status).toBe(303);
  });

  test('when a signed-out browser posts sign-out, then it is led to sign-in and nothing is stored', async () => {
    const res = await request(t.app).post('/admin/sign-out').type('form').send({});
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/admin/sign-in');
    expect(await sessionRows(t.sequelize)).toBe(0);
  });
});
