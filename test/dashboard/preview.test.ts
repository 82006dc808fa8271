// The Preview beside Save (SEMANTICS §15) on the dashboard's three forms that change a policy:
// Configure Access Settings (a gate rule, approval, a cap, scheduled runs), an agent's access rules,
// and a toolkit's members. A preview shows, above Save, who gains and loses which tools and the
// recorded calls it would decide otherwise, linked to their records; it keeps the form as sent,
// refuses what Save refuses, needs the session and its CSRF token, and writes nothing.
import { CLIENT_TOKEN, createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';
import { desk, previewSection, state } from './preview-desk';
import { signedIn, visitor, type Visitor } from './session';

let t: TestApp;
let v: Visitor;
let made = 0;

beforeAll(async () => {
  t = await createTestApp({ dashboard: true });
  v = await signedIn(t.app);
});
afterAll(() => t.close());

describe('when an operator previews a gate rule on Configure Access Settings', () => {
  test('then the page shows who would lose which tools and the call it would refuse, linked to its record, and Save and Try as candidate below', async () => {
    const d = await desk(t, 'Preview desk');
    const res = await v.post(`${d.page}/rules`, { _csrf: await v.token(d.page), kind: 'deny', pattern: '*@acme.com', preview: 'yes' });
    expect(res.status).toBe(200);
    const shown = previewSection(res.text);
    expect(shown).toContain('If you save this');
    expect(shown).toContain('jane@acme.com would lose check_flavor_stock and lookup_order (1 run in the last 7 days).');
    expect(shown).toContain('1 recorded call would be decided otherwise: 1 would be refused.');
    expect(shown).toMatch(
      new RegExp(`<a href="/admin/tool-calls\\?agent=${d.agent}&amp;after=[A-Za-z0-9_-]+#call-${d.janeCall}">Call ${d.janeCall}</a>`),
    );
    // The form keeps what was sent, with the preview inside it above Save and Try as candidate.
    const form = /<form[^>]*aria-label="Add a rule"[\s\S]*?<\/form>/.exec(res.text)![0];
    expect(form).toContain('<option value="deny" selected');
    expect(form).toContain('value="*@acme.com"');
    expect(form.indexOf('If you save this')).toBeLessThan(form.indexOf('>Add rule</button>'));
    expect(form).toContain('>Try as candidate</button>');
    expect(form).toMatch(
      /<button type="submit" class="secondary" name="preview" value="yes" formaction="[^"]+\/rules#preview">Preview<\/button>/,
    );
  });

  test('then the record link opens the Tool calls page at that record', async () => {
    const d = await desk(t, 'Preview desk');
    const res = await v.post(`${d.page}/rules`, { _csrf: await v.token(d.page), kind: 'deny', pattern: '*@acme.com', preview: 'yes' });
    const href = new RegExp(`href="(/admin/tool-calls[^"#]+)#call-${d.janeCall}"`).exec(res.text)![1]!.replace(/&amp;/g, '&');
    const page = await v.get(href);
    expect(page.status).toBe(200);
    const firstRow = /<tbody>\s*<tr[^>]*>/.exec(page.text)![0];
    expect(firstRow).toContain(`id="call-${d.janeCall}"`);
  });

  test('then nothing is written: every row count and every policy version stay as they were, and the rule is not added', async () => {
    const d = await desk(t, 'Preview desk');
    const token = await v.token(d.page);
    const before = await state(t);
    await v.post(`${d.page}/rules`, { _csrf: token, kind: 'deny', pattern: '*@acme.com', preview: 'yes' });
    await v.post(`${d.page}/approval`, { _csrf: token, require_approval: 'on', approval: 'mara@thescoop.com', preview: 'yes' });
    await v.post(`${d.page}/caps`, { _csrf: token, tool_id: '', per: 'sender', limit: '1', window: '1d', preview: 'yes' });
    await v.post(d.page, { _csrf: token, allow_proactive: 'on', preview: 'yes' });
    await v.post(`/admin/agents/${d.agent}/access-rules`, { _csrf: token, kind: 'allow', pattern: '*@thescoop.com', preview: 'yes' });
    await v.post(`/admin/toolkits/${d.kit}`, { _csrf: token, name: 'Renamed', description: '', member: 'lookup_order', preview: 'yes' });
    expect(await state(t)).toEqual(before);
    const api = await t.admin().get(`/api/agents/${d.agent}/toolkits/${d.attachment}`).expect(200);
    expect(api.body).toMatchObject({ rules: [], approval: null, caps: [], allow_proactive: false });
    expect(api.body.candidate).toBeUndefined();
  });

  test('then a rule that changes no one says that nothing would change', async () => {
    const d = await desk(t, 'Preview desk');
    const res = await v.post(`${d.page}/rules`, { _csrf: await v.token(d.page), kind: 'deny', pattern: 'nobody@else.com', preview: 'yes' });
    expect(res.status).toBe(200);
    expect(previewSection(res.text)).toContain(
      'Nothing would change: no sender or scheduled run of the last 7 days would gain or lose a tool',
    );
  });

  test('then a refused pattern is shown beside the field as Save shows it, escaped, with no preview', async () => {
    const d = await desk(t, 'Preview desk');
    const token = await v.token(d.page);
    const form = { _csrf: token, kind: 'deny', pattern: '<script>alert(1)</script>' };
    const saved = await v.post(`${d.page}/rules`, form);
    const previewed = await v.post(`${d.page}/rules`, { ...form, preview: 'yes' });
    expect(previewed.status).toBe(saved.status);
    expect(previewed.status).toBe(422);
    const error = (html: string) => /<p class="field-error" id="pattern-error">([\s\S]*?)<\/p>/.exec(html)?.[1];
    expect(error(previewed.text)).toBe(error(saved.text));
    expect(previewed.text).not.toContain('<script>alert(1)');
    expect(previewed.text).toContain('value="&lt;script>alert(1)&lt;/script>"');
    expect(previewSection(previewed.text)).toBe('');
  });
});

describe('when an operator previews the other forms of Configure Access Settings', () => {
  test('then approval shows the calls that would wait for approval', async () => {
    const d = await desk(t, 'Preview desk');
    const res = await v.post(`${d.page}/approval`, {
      _csrf: await v.token(d.page),
      require_approval: 'on',
      approval: 'mara@thescoop.com',
      preview: 'yes',
    });
    expect(res.status).toBe(200);
    expect(previewSection(res.text)).toContain('1 recorded call would be decided otherwise: 1 would wait for approval.');
    expect(res.text).toMatch(/<textarea id="approvers" name="approval"[^>]*>mara@thescoop.com<\/textarea>/);
  });

  test('then allowing scheduled runs shows them gaining the tools, and the box stays checked', async () => {
    const d = await desk(t, 'Preview desk');
    // Refused and recorded: the toolkit is kept from scheduled runs.
    await t
      .scheduler()
      .post(`/api/agents/${d.agent}/tool-calls`)
      .send({ tool: 'check_flavor_stock', input: {}, scheduled: true })
      .expect(403);
    const res = await v.post(d.page, { _csrf: await v.token(d.page), allow_proactive: 'on', preview: 'yes' });
    expect(res.status).toBe(200);
    expect(previewSection(res.text)).toMatch(
      /Preview desk \d+'s scheduled runs would gain check_flavor_stock and lookup_order \(1 run in the last 7 days\)\./,
    );
    expect(previewSection(res.text)).toContain('1 recorded call would be decided otherwise: 1 would run.');
    expect(res.text).toMatch(/<input type="checkbox" id="allow_proactive" name="allow_proactive" value="on" checked/);
  });

  test('then a cap of one call per sender shows nothing refused for one call, and a bad window is refused as Add cap refuses it', async () => {
    const d = await desk(t, 'Preview desk');
    const token = await v.token(d.page);
    const fine = await v.post(`${d.page}/caps`, { _csrf: token, tool_id: '', per: 'sender', limit: '1', window: '1d', preview: 'yes' });
    expect(fine.status).toBe(200);
    expect(previewSection(fine.text)).toContain('Nothing would change');
    const bad = await v.post(`${d.page}/caps`, { _csrf: token, tool_id: '', per: 'sender', limit: '1', window: 'soon', preview: 'yes' });
    expect(bad.status).toBe(422);
    expect(bad.text).toContain('A window is a whole number and a unit');
    expect(bad.text).toContain('value="soon"');
  });

  test('then Try as candidate on the caps form stores the cap as the candidate, and the live caps stay as they were', async () => {
    const d = await desk(t, 'Preview desk');
    const tried = await v.post(`${d.page}/caps`, {
      _csrf: await v.token(d.page),
      tool_id: 'lookup_order',
      per: 'agent',
      limit: '5',
      window: '1h',
      try: 'candidate',
    });
    expect(tried.status).toBe(303);
    expect(tried.headers.location).toBe(`${d.page}/candidate`);
    const api = await t.admin().get(`/api/agents/${d.agent}/toolkits/${d.attachment}`).expect(200);
    expect(api.body.caps).toEqual([]);
    expect(api.body.candidate.caps).toMatchObject([{ tool_id: 'lookup_order', per: 'agent', limit: 5, window: '1h' }]);
  });
});

describe("when an operator previews an access rule on an agent's page", () => {
  test('then Jane is shown losing every tool and her call refused by the access rules', async () => {
    const d = await desk(t, 'Preview desk');
    const page = `/admin/agents/${d.agent}`;
    const res = await v.post(`${page}/access-rules`, {
      _csrf: await v.token(page),
      kind: 'allow',
      pattern: '*@thescoop.com',
      preview: 'yes',
    });
    expect(res.status).toBe(200);
    const shown = previewSection(res.text);
    expect(shown).toContain('jane@acme.com would lose check_flavor_stock and lookup_order');
    expect(shown).toContain('would be refused (access rules)');
    expect(shown).toContain(`#call-${d.janeCall}">Call ${d.janeCall}</a>`);
    expect(res.text).toMatch(/id="access-pattern"[^>]*value="\*@thescoop.com"/);
  });

  test('then a pattern holding markup is refused beside Access pattern, escaped', async () => {
    const d = await desk(t, 'Preview desk');
    const page = `/admin/agents/${d.agent}`;
    const res = await v.post(`${page}/access-rules`, {
      _csrf: await v.token(page),
      kind: 'deny',
      pattern: '<script>x</script>',
      preview: 'yes',
    });
    expect(res.status).toBe(422);
    expect(res.text).toContain('id="access-pattern-error"');
    expect(res.text).not.toContain('<script>x');
  });
});

describe("when an operator previews a toolkit's members", () => {
  test('then each agent that holds it is named, with who would lose the tool taken out and the call it would refuse, and its description shows escaped', async () => {
    const d = await desk(t, 'Preview desk');
    const other = await makeAgent(t, { name: 'Second holder', toolkit_ids: [d.kit] });
    await t
      .client()
      .post(`/api/agents/${other}/tool-calls`)
      .send({ tool: 'check_flavor_stock', input: { flavor: 'mint' }, sender: 'ann@acme.com' });
    const page = `/admin/toolkits/${d.kit}`;
    const res = await v.post(page, {
      _csrf: await v.token(page),
      name: `${d.name}`,
      description: '<script>alert(3)</script>',
      member: 'check_flavor_stock',
      preview: 'yes',
    });
    expect(res.status).toBe(200);
    const shown = previewSection(res.text);
    expect(shown).toContain(`jane@acme.com, writing to ${d.name}, would lose lookup_order (1 run in the last 7 days).`);
    expect(shown).toContain(`Call ${d.janeCall}</a> (${d.name})`);
    expect(shown).toContain('ann@acme.com, writing to Second holder, would lose lookup_order (1 run in the last 7 days).');
    // Ann's stock check stays offered: only Jane's lookup is decided otherwise.
    expect(shown).toContain('1 recorded call would be decided otherwise: 1 would be refused.');
    expect(res.text).toContain('&lt;script>alert(3)&lt;/script></textarea>');
    expect(res.text).not.toContain('<script>alert(3)');
    // The checklist as sent: lookup_order unchecked.
    expect(res.text).toMatch(/id="member-lookup_order" name="member" value="lookup_order"(?! checked)/);
    expect((await t.admin().get(`/api/toolkits/${d.kit}`).expect(200)).body.member_tool_ids).toEqual([
      'lookup_order',
      'check_flavor_stock',
    ]);
  });

  test('then a member added is shown gained by the sender who reached the agent, with nothing recorded decided otherwise', async () => {
    const d = await desk(t, 'Preview desk');
    const page = `/admin/toolkits/${d.kit}`;
    const res = await v.post(page, {
      _csrf: await v.token(page),
      name: `${d.name}`,
      description: '',
      member: ['lookup_order', 'check_flavor_stock', 'send_email'],
      preview: 'yes',
    });
    expect(res.status).toBe(200);
    const shown = previewSection(res.text);
    // On a page of one form, the preview's heading is an h2 and its lists' are h3.
    expect(shown).toContain('<h2 id="preview-heading">If you save this</h2>');
    expect(shown).toContain('<h3>Who would gain tools</h3>');
    expect(shown).toContain('jane@acme.com would gain send_email (1 run in the last 7 days).');
    expect(shown).not.toContain('Recorded calls it would decide otherwise');
  });

  test('then a toolkit no agent holds says that nothing would change for anyone', async () => {
    const kit = await makeToolkit(t, `Preview unheld ${++made}`, ['lookup_order']);
    const page = `/admin/toolkits/${kit}`;
    const res = await v.post(page, {
      _csrf: await v.token(page),
      name: `Preview unheld ${made}`,
      description: '',
      member: 'send_email',
      preview: 'yes',
    });
    expect(res.status).toBe(200);
    expect(previewSection(res.text)).toContain('Nothing would change for anyone: no agent holds this toolkit yet.');
  });

  test('then a new toolkit is previewed as reaching no one and is not created, and one without a name is refused as Create toolkit refuses it', async () => {
    const token = await v.token('/admin/toolkits/new');
    const name = `Preview new ${++made}`;
    const res = await v.post('/admin/toolkits', { _csrf: token, name, description: '', member: 'send_email', preview: 'yes' });
    expect(res.status).toBe(200);
    expect(previewSection(res.text)).toContain('Nothing would change for anyone: no agent holds this toolkit yet.');
    expect(res.text).toContain(`value="${name}"`);
    expect((await t.admin().get('/api/toolkits').expect(200)).body.map((k: { name: string }) => k.name)).not.toContain(name);
    const unnamed = { _csrf: token, name: '', description: '', member: 'send_email' };
    const saved = await v.post('/admin/toolkits', unnamed);
    const previewed = await v.post('/admin/toolkits', { ...unnamed, preview: 'yes' });
    expect([previewed.status, saved.status]).toEqual([422, 422]);
    const error = (html: string) => /<p class="field-error" id="name-error">([\s\S]*?)<\/p>/.exec(html)?.[1];
    expect(error(previewed.text)).toBe(error(saved.text));
  });

  test('then All Tools is previewed as following the manifest, whatever the form says, and is not changed', async () => {
    const all = ((await t.admin().get('/api/toolkits').expect(200)).body as { id: number; system_key: string | null; name: string }[]).find(
      (k) => k.system_key === 'all_tools',
    )!;
    const page = `/admin/toolkits/${all.id}`;
    const res = await v.post(page, {
      _csrf: await v.token(page),
      name: 'Not all tools',
      description: '',
      member: 'send_email',
      preview: 'yes',
    });
    expect(res.status).toBe(200);
    expect(previewSection(res.text)).toContain('Nothing would change for anyone: All Tools holds every registered tool');
    expect((await t.admin().get(`/api/toolkits/${all.id}`).expect(200)).body.name).toBe(all.name);
  });

  test('then an unknown member is refused beside Members as Save refuses it', async () => {
    const d = await desk(t, 'Preview desk');
    const page = `/admin/toolkits/${d.kit}`;
    const res = await v.post(page, { _csrf: await v.token(page), name: 'x', description: '', member: 'no_such_tool', preview: 'yes' });
    expect(res.status).toBe(422);
    expect(res.text).toContain('id="members-error"');
    expect(res.text).toContain('no_such_tool');
  });
});

describe('when a preview is asked for without the right to', () => {
  test('then one without the CSRF token is refused, and one signed out is told to sign in, and neither shows a preview', async () => {
    const d = await desk(t, 'Preview desk');
    const forged = await v.post(`${d.page}/rules`, { kind: 'deny', pattern: '*@acme.com', preview: 'yes' });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('This form was not sent from a dashboard page');
    const stranger = visitor(t.app);
    const refused = await stranger.post('/admin/sign-in', { _csrf: await stranger.token('/admin/sign-in'), token: CLIENT_TOKEN });
    expect(refused.status).toBe(401);
    const signedOut = await stranger.post(`${d.page}/rules`, {
      _csrf: await stranger.token('/admin/sign-in'),
      kind: 'deny',
      pattern: '*@acme.com',
      preview: 'yes',
    });
    expect(signedOut.status).toBe(401);
    expect(previewSection(forged.text) + previewSection(signedOut.text)).toBe('');
  });
});
