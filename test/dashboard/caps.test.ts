// Caps on the dashboard (SEMANTICS §13): Configure Access Settings sets and shows them, a wrong one
// is refused beside its field, and Who gets what shows what a sender has left.
import { createTestApp, type TestApp } from '../support/app';
import { createSundae, type Sundae } from '../support/scoop';
import { signedIn, type Visitor } from './session';
import { makeToolkit } from '../support/factories';

let t: TestApp;
let v: Visitor;
let sundae: Sundae;

beforeAll(async () => {
  t = await createTestApp({ dashboard: true });
  sundae = await createSundae(t, 'gate');
  v = await signedIn(t.app);
});
afterAll(() => t.close());

const page = () => `/admin/agents/${sundae.id}/toolkits/${sundae.finance}`;

test('when an operator adds a cap, then Configure Access Settings shows it, and the API reads it back', async () => {
  const added = await v.post(`${page()}/caps`, {
    _csrf: await v.token(page()),
    tool_id: 'process_refund',
    per: 'sender',
    limit: '3',
    window: '24h',
  });
  expect(added.status).toBe(303);
  expect((await v.get(added.headers.location!)).text).toContain('Cap added: at most 3 process_refund calls per sender per 1d.');
  const shown = await v.get(page());
  expect(shown.text).toContain('3 calls per sender per 1d');
  expect((await t.admin().get(`/api/agents/${sundae.id}/toolkits/${sundae.finance}`).expect(200)).body.caps).toEqual([
    { tool_id: 'process_refund', per: 'sender', limit: 3, window: '1d' },
  ]);
});

test("when the caps' tool menu is shown, then each member is named in full: its display name and its id", async () => {
  const shown = await v.get(page());
  expect(shown.text).toMatch(
    /<select id="cap-tool" name="tool_id"[^>]*><option value selected>All its members together<\/option><option value="process_refund">Process refund \(process_refund\)<\/option><\/select>/,
  );
});

test('when a cap is written wrong, then the reason shows beside its field and nothing changes', async () => {
  const refused = await v.post(`${page()}/caps`, { _csrf: await v.token(page()), tool_id: '', per: 'agent', limit: '5', window: 'weekly' });
  expect(refused.status).toBe(422);
  expect(refused.text).toMatch(/id="cap-window-error"[^>]*>[^<]*s, m, h or d/);
  expect((await t.admin().get(`/api/agents/${sundae.id}/toolkits/${sundae.finance}`).expect(200)).body.caps).toHaveLength(1);
});

test('when Who gets what checks a sender, then it shows what the cap has left for them', async () => {
  await t
    .client()
    .post(`/api/agents/${sundae.id}/tool-calls`)
    .send({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender: 'mara@thescoop.com' })
    .expect(200);
  const who = await v.get(`/admin/who-gets-what?agent=${sundae.id}&run=sender&sender=mara%40thescoop.com`);
  expect(who.text).toContain('Cap: 2 left of 3 process_refund calls per sender per 1d.');
});

test('when Who gets what checks a sender, then each offered tool says whether its calls count toward a cap', async () => {
  const who = await v.get(`/admin/who-gets-what?agent=${sundae.id}&run=sender&sender=mara%40thescoop.com`);
  expect(who.text).toMatch(/<code>process_refund<\/code> (<!-- -->)?\s*(<!-- -->)?\(capped: see the caps below\)/);
  expect(who.text).not.toMatch(/<code>lookup_order<\/code>[^<]*\(capped/);
});

test('when another attachment offers the capped tool uncapped, then Who gets what says the cap does not bind it', async () => {
  const kit = await makeToolkit(t, 'Refunds without a cap', ['process_refund']);
  const attached = (
    await t
      .admin()
      .post(`/api/agents/${sundae.id}/toolkits`)
      .send({ toolkit_id: kit, rules: [{ kind: 'allow', pattern: 'mara@thescoop.com' }] })
      .expect(201)
  ).body.id;
  const who = await v.get(`/admin/who-gets-what?agent=${sundae.id}&run=sender&sender=mara%40thescoop.com`);
  expect(who.text).toContain('(no cap: another attachment offers it uncapped)');
  await t.admin().delete(`/api/agents/${sundae.id}/toolkits/${attached}`).expect(204);
});

test('when a remove names a place that holds no cap, then it is a 404 and nothing is removed', async () => {
  for (const index of ['5', 'x'])
    expect((await v.post(`${page()}/caps/${index}/delete`, { _csrf: await v.token(page()) })).status).toBe(404);
  expect((await t.admin().get(`/api/agents/${sundae.id}/toolkits/${sundae.finance}`).expect(200)).body.caps).toHaveLength(1);
});

test("when the operator removes the cap and confirms on its preview's page, then it is gone", async () => {
  const token = await v.token(page());
  expect((await v.post(`${page()}/caps/0/delete`, { _csrf: token })).status).toBe(200);
  expect((await v.post(`${page()}/caps/0/delete`, { _csrf: token, confirmed: 'yes' })).status).toBe(303);
  expect((await t.admin().get(`/api/agents/${sundae.id}/toolkits/${sundae.finance}`).expect(200)).body.caps).toEqual([]);
});
