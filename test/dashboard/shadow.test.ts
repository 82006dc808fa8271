// Candidate terms on the dashboard (SEMANTICS §15): "Try as candidate" beside a form's Save stores
// the form's terms as the candidate and leaves the live terms alone; the candidate's page shows
// what it would have changed so far, and promotes or drops it.
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';
import { signedIn, type Visitor } from './session';

let t: TestApp;
let v: Visitor;
let made = 0;

beforeAll(async () => {
  t = await createTestApp({ dashboard: true });
  v = await signedIn(t.app);
});
afterAll(() => t.close());

/** An agent holding an open Support toolkit; its ids and its Configure Access Settings page. */
async function support(): Promise<{ agent: number; attachment: number; page: string }> {
  made += 1;
  const kit = await makeToolkit(t, `Dashboard shadow ${made}`, ['lookup_order', 'check_flavor_stock']);
  const agent = await makeAgent(t, { name: `Dashboard shadow ${made}`, toolkit_ids: [] });
  const attachment = (await t.admin().post(`/api/agents/${agent}/toolkits`).send({ toolkit_id: kit }).expect(201)).body.id as number;
  return { agent, attachment, page: `/admin/agents/${agent}/toolkits/${attachment}` };
}

const tryDeny = async (page: string, pattern = '*@acme.com') =>
  v.post(`${page}/rules`, { _csrf: await v.token(page), kind: 'deny', pattern, try: 'candidate' });

test('when Configure Access Settings is shown, then "Try as candidate" stands beside Add rule, Save approval, Add cap and Save', async () => {
  const g = await support();
  const page = await v.get(g.page);
  expect(page.status).toBe(200);
  expect(page.text.match(/<button type="submit" name="try" value="candidate">Try as candidate<\/button>/g)).toHaveLength(4);
});

test('when an operator tries a deny rule as candidate, then the live rules stay as they were and the candidate page shows it', async () => {
  const g = await support();
  const tried = await tryDeny(g.page);
  expect(tried.status).toBe(303);
  expect(tried.headers.location).toBe(`${g.page}/candidate`);
  const api = await t.admin().get(`/api/agents/${g.agent}/toolkits/${g.attachment}`).expect(200);
  expect(api.body.rules).toEqual([]);
  expect(api.body.candidate).toMatchObject({ rules: [{ kind: 'deny', pattern: '*@acme.com' }] });
  const shown = await v.get(tried.headers.location!);
  expect(shown.text).toContain('Candidate terms set: the live terms still decide every run');
  expect(shown.text).toContain('Gate: deny *@acme.com.');
  expect((await v.get(g.page)).text).toContain('See what they would change, promote or drop them');
});

test('when traffic arrives under a candidate, then its page shows who would lose which tools and the calls it would refuse', async () => {
  const g = await support();
  await tryDeny(g.page);
  await t
    .client()
    .post(`/api/agents/${g.agent}/tool-calls`)
    .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' })
    .expect(200);
  await t
    .client()
    .post(`/api/agents/${g.agent}/messages`)
    .send({ message: { from: 'jane@acme.com', body: 'Where is my order SCP-1042?', message_id: '<dash-shadow@acme.com>' } })
    .expect(200);
  const shown = await v.get(`${g.page}/candidate`);
  expect(shown.text).toMatch(/1 of 1 run would be offered other tools; \d+ calls? would have been decided otherwise\./);
  expect(shown.text).toMatch(/<caption>Who would lose tools<\/caption>[\s\S]*jane@acme.com[\s\S]*check_flavor_stock, lookup_order/);
  expect(shown.text).toContain('would be refused (deny_rule)');
});

test('when an operator promotes the candidate, then it is the live terms and the candidate is gone', async () => {
  const g = await support();
  await tryDeny(g.page);
  const promoted = await v.post(`${g.page}/candidate/promote`, { _csrf: await v.token(`${g.page}/candidate`) });
  expect(promoted.status).toBe(303);
  expect((await v.get(promoted.headers.location!)).text).toContain('Its gate rules: deny *@acme.com.');
  const api = await t.admin().get(`/api/agents/${g.agent}/toolkits/${g.attachment}`).expect(200);
  expect(api.body.rules).toMatchObject([{ kind: 'deny', pattern: '*@acme.com' }]);
  expect(api.body.candidate).toBeUndefined();
  await t
    .client()
    .post(`/api/agents/${g.agent}/tool-calls`)
    .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' })
    .expect(403);
});

test('when an operator drops the candidate, then the live terms stay and its page is a 404', async () => {
  const g = await support();
  await tryDeny(g.page);
  const dropped = await v.post(`${g.page}/candidate/drop`, { _csrf: await v.token(`${g.page}/candidate`) });
  expect(dropped.status).toBe(303);
  expect((await v.get(dropped.headers.location!)).text).toContain('Candidate dropped: the live terms are as they were.');
  expect((await t.admin().get(`/api/agents/${g.agent}/toolkits/${g.attachment}`).expect(200)).body).toMatchObject({ rules: [] });
  expect((await v.get(`${g.page}/candidate`)).status).toBe(404);
});

test('when a candidate rule is malformed, then the reason shows beside the pattern and no candidate is set', async () => {
  const g = await support();
  const refused = await tryDeny(g.page, '*acme.com');
  expect(refused.status).toBe(422);
  expect(refused.text).toMatch(/id="pattern-error"[^>]*>[^<]*has no @/);
  expect((await t.admin().get(`/api/agents/${g.agent}/toolkits/${g.attachment}`).expect(200)).body.candidate).toBeUndefined();
});

test('when approval and scheduled runs are tried as candidate, then they join the rule already tried and nothing live changes', async () => {
  const g = await support();
  await tryDeny(g.page);
  await v.post(`${g.page}/approval`, {
    _csrf: await v.token(g.page),
    require_approval: 'on',
    approval: 'mara@thescoop.com',
    try: 'candidate',
  });
  await v.post(g.page, { _csrf: await v.token(g.page), allow_proactive: 'on', try: 'candidate' });
  const api = await t.admin().get(`/api/agents/${g.agent}/toolkits/${g.attachment}`).expect(200);
  expect(api.body).toMatchObject({ rules: [], approval: null, allow_proactive: false });
  expect(api.body.candidate).toMatchObject({
    rules: [{ kind: 'deny', pattern: '*@acme.com' }],
    approval: { approvers: ['mara@thescoop.com'] },
    allow_proactive: true,
  });
});

test("when calls run past a candidate's cap, then its page says how many ran that the caps would refuse, and marks them", async () => {
  const g = await support();
  await t
    .admin()
    .put(`/api/agents/${g.agent}/toolkits/${g.attachment}/candidate`)
    .send({ caps: [{ tool_id: 'lookup_order', per: 'sender', limit: 1, window: '1d' }] })
    .expect(200);
  for (let i = 0; i < 3; i++) {
    await t
      .client()
      .post(`/api/agents/${g.agent}/tool-calls`)
      .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' })
      .expect(200);
  }
  const shown = await v.get(`${g.page}/candidate`);
  expect(shown.text).toContain('2 calls would have been decided otherwise.');
  expect(shown.text).toContain('Of those, 2 calls ran that these caps would refuse as over the cap.');
  expect(shown.text).toContain('would be refused (cap_exceeded)');
  expect(shown.text).toContain('Caps: 1 lookup_order per sender per 1d');
});
