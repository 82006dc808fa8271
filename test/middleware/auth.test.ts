// authenticate() reads who calls (a toolgate token, else the host's roleOf, else no one) into the
// request's state; requireRole() admits the listed roles. Each through the middleware harness.
import { authenticate, checkAuthOptions, requireRole, type RoleOf } from '../../middleware/auth';
import type { Role } from '../../middleware/request-state';
import { throughMiddleware } from '../support/middleware-harness';

const ADMIN = 'admin-token-0123456789abcdef0123456789';
const CLIENT = 'client-token-0123456789abcdef012345678';
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const auth = (options: Parameters<typeof checkAuthOptions>[0]) => authenticate(checkAuthOptions(options));

describe('authenticate()', () => {
  test('when a known token is sent, then its role and a digest of it as the caller are kept, never the token', async () => {
    const out = await throughMiddleware(auth({ adminToken: ADMIN, clientTokens: [CLIENT] }), { headers: bearer(CLIENT) });
    expect(out.passed).toBe(true);
    expect(out.state?.auth).toMatchObject({ role: 'client', source: 'token', caller: expect.stringMatching(/^[0-9a-f]{24}$/) });
    expect(JSON.stringify(out.state)).not.toContain(CLIENT);
  });

  test('when an unknown token or a header that is not "Bearer <token>" is sent, then it is a 401 saying which', async () => {
    const unknown = await throughMiddleware(auth({ adminToken: ADMIN }), { headers: bearer('x'.repeat(40)) });
    expect(unknown).toMatchObject({
      status: 401,
      body: { code: 'unauthenticated', detail: expect.stringContaining('not one this service knows') },
    });
    const malformed = await throughMiddleware(auth({ adminToken: ADMIN }), { headers: { Authorization: 'Basic abc' } });
    expect(malformed).toMatchObject({ status: 401, body: { detail: expect.stringContaining('"Bearer <token>"') } });
  });

  test("when the host's roleOf answers, then its role is kept; when it throws, a 503; when it answers nonsense, a 500, never a grant", async () => {
    const as = async (roleOf: RoleOf) => throughMiddleware(auth({ adminToken: ADMIN, roleOf }));
    expect((await as(() => ({ role: 'client', caller: 42 }))).state?.auth).toMatchObject({ role: 'client', source: 'roleOf' });
    expect((await as(async () => 'admin' as const)).state?.auth).toMatchObject({ role: 'admin', source: 'roleOf' });
    expect(
      await as(() => {
        throw new Error('session store down');
      }),
    ).toMatchObject({ status: 503, body: { code: 'authentication_unavailable' } });
    expect(await as(() => 'root' as unknown as Role)).toMatchObject({ status: 500, passed: false, body: { code: 'misconfigured' } });
  });

  test('when the client routes are open and no token is sent, then only a name of this service is answered (421 otherwise)', async () => {
    const open = auth({ adminToken: ADMIN, clientRoutes: 'open', allowedHosts: ['toolgate.internal'] });
    expect((await throughMiddleware(open, { headers: { Host: 'toolgate.internal' } })).state?.auth).toMatchObject({
      role: null,
      anonymousClient: true,
    });
    expect(await throughMiddleware(open, { headers: { Host: 'evil.example' } })).toMatchObject({
      status: 421,
      body: { code: 'host_not_allowed' },
    });
  });

  test('when a token is short or two roles share one, then checking the options fails with the code that says so', () => {
    expect(() => checkAuthOptions({ adminToken: 'short' })).toThrow(expect.objectContaining({ code: 'ERR_TOOLGATE_WEAK_TOKEN' }));
    expect(() => checkAuthOptions({ adminToken: ADMIN, clientTokens: [ADMIN] })).toThrow(
      expect.objectContaining({ code: 'ERR_TOOLGATE_SHARED_TOKEN' }),
    );
  });
});

describe('requireRole()', () => {
  const who = (role: Role | null, extra: { anonymousClient?: boolean; source?: 'token' | 'roleOf' } = {}) => ({
    state: { auth: { role, anonymousClient: false, ...extra } },
  });

  test('when the role is listed, or is admin, then the request passes; another role is a 403 naming the token needed', async () => {
    expect((await throughMiddleware(requireRole('client'), who('client'))).passed).toBe(true);
    expect((await throughMiddleware(requireRole('client'), who('admin'))).passed).toBe(true);
    const scheduler = await throughMiddleware(requireRole('client'), who('scheduler'));
    expect(scheduler).toMatchObject({
      status: 403,
      body: { code: 'forbidden', detail: 'The scheduler token may not call this route: it needs the client token.' },
    });
  });

  test('when no one calls, then a client route admits them only while the client routes are open', async () => {
    expect((await throughMiddleware(requireRole('client'), who(null, { anonymousClient: true }))).passed).toBe(true);
    expect(await throughMiddleware(requireRole('admin'), who(null, { anonymousClient: true }))).toMatchObject({ status: 401 });
    expect(await throughMiddleware(requireRole('client'), who(null))).toMatchObject({ status: 401 });
  });

  test('when authenticate() did not run before it, then it is a 500 misconfigured, never a grant', async () => {
    expect(await throughMiddleware(requireRole('client'))).toMatchObject({ status: 500, passed: false, body: { code: 'misconfigured' } });
  });
});
