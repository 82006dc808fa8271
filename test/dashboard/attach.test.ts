// Attaching a toolkit on an agent's page: no toolkit is chosen beforehand, and one that holds gate
// tools is attached with an open gate only after a confirmation that says who would get what.
// An allow pattern given with it, or a toolkit of enhancement tools only, needs no confirmation.
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';
import { signedIn, type Visitor } from './session';

let t: TestApp;
let v: Visitor;

beforeAll(async () => {
  t = await createTestApp({ dashboard: true });
  v = await signedIn(t.app);
});
afterAll(() => t.close());

const attached = async (agentId: number) =>
  (await t.tg.attachments.list(agentId)).map((a) => ({ toolkit: a.toolkit.name, rules: a.rules.map((r) => `${r.kind} ${r.pattern}`) }));

const attach = async (agentId: number, form: Record<string, string>) =>
  await v.post(`/admin/agents/${agentId}/toolkits`, { _csrf: await v.token(`/admin/agents/${agentId}`), ...form });

/** A hidden field's value on a page (the confirmation's `confirmed`). */
const hidden = (html: string, name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`).exec(html)?.[1];

test('when an agent page offers the attach form, then no toolkit is chosen: the menu starts on a placeholder', async () => {
  const agent = await makeAgent(t, { name: 'Placeholder desk', toolkit_ids: [] });
  const page = await v.get(`/admin/agents/${agent}`);
  expect(page.text).toMatch(/<select id="toolkit" name="toolkit_id"[^>]*><option value selected>Choose a toolkit<\/option>/);
  expect(page.text).not.toMatch(/<select id="toolkit"[^]*?<option value="\d+" selected/);
});

test('when the form is sent on the placeholder, then it is refused with the reason beside Toolkit, and nothing is attached', async () => {
  const agent = await makeAgent(t, { name: 'Unchosen desk', toolkit_ids: [] });
  const refused = await attach(agent, { toolkit_id: '' });
  expect(refused.status).toBe(422);
  expect(refused.text).toContain('<p class="field-error" id="toolkit-error">Choose the toolkit to attach: none is chosen.</p>');
  expect(refused.text).toMatch(/<select id="toolkit" name="toolkit_id" aria-invalid="true"/);
  expect(await attached(agent)).toEqual([]);
});

test('when All Tools is attached with no rule, then a confirmation says every sender would be offered its gate tools, and nothing is attached yet', async () => {
  const agent = await makeAgent(t, { name: 'Sundae', toolkit_ids: [] });
  const allTools = (await t.tg.toolkits.list()).find((k) => k.system_key === 'all_tools')!;
  const asked = await attach(agent, { toolkit_id: String(allTools.id) });
  expect(asked.status).toBe(200);
  expect(asked.text).toContain('<h1>Attach All Tools to Sundae with an open gate?</h1>');
  expect(asked.text).toMatch(/Every sender who reaches Sundae would be offered [^<]*process_refund[^<]* and send_email, on every message/);
  expect(asked.text).toContain('Who reaches Sundae: every sender (no access rules).');
  // Enhancement tools never refuse a run: named apart, not among what every sender would be offered.
  expect(asked.text).not.toMatch(/would be offered [^<]*task_creator/);
  expect(asked.text).toContain('It also holds task_creator and reply_generator: enhancement tools');
  expect(asked.text).toMatch(/<button type="submit" class="danger">Confirm<\/button><a href="\/admin\/agents\/\d+#attach">Cancel<\/a>/);
  expect(hidden(asked.text, '_csrf')).toMatch(/^[0-9a-f.]+$/);
  expect(hidden(asked.text, 'toolkit_id')).toBe(String(allTools.id));
  expect(await attached(agent)).toEqual([]);
});

test('when the operator confirms, then the toolkit is attached with an open gate, and the page says so', async () => {
  const agent = await makeAgent(t, { name: 'Confirming desk', toolkit_ids: [] });
  const kit = await makeToolkit(t, 'Refunds and mail', ['process_refund', 'send_email']);
  const asked = await attach(agent, { toolkit_id: String(kit) });
  expect(hidden(asked.text, 'confirmed')).toBe('process_refund,send_email');
  const confirmed = await v.post(`/admin/agents/${agent}/toolkits`, {
    _csrf: hidden(asked.text, '_csrf')!,
    toolkit_id: String(kit),
    confirmed: hidden(asked.text, 'confirmed')!,
  });
  expect(confirmed.status).toBe(303);
  expect(await attached(agent)).toEqual([{ toolkit: 'Refunds and mail', rules: [] }]);
  expect((await v.get(confirmed.headers.location!)).text).toContain('Refunds and mail attached with an open gate.');
});

test('when the agent has access rules, then the confirmation says who reaches it: only they would be offered the tools', async () => {
  const agent = await makeAgent(t, { name: 'Scout', toolkit_ids: [] });
  await t.tg.accessRules.add(agent, { kind: 'allow', pattern: '*@thescoop.com' });
  const kit = await makeToolkit(t, 'Scout refunds', ['process_refund']);
  const asked = await attach(agent, { toolkit_id: String(kit) });
  expect(asked.text).toContain('Every sender who reaches Scout would be offered process_refund');
  expect(asked.text).toContain('Who reaches Scout: only *@thescoop.com.');
});

test('when an allow pattern is given with the toolkit, then it is attached behind it at once, with no confirmation', async () => {
  const agent = await makeAgent(t, { name: 'Ruled desk', toolkit_ids: [] });
  const kit = await makeToolkit(t, 'Ruled refunds', ['process_refund', 'send_email']);
  const done = await attach(agent, { toolkit_id: String(kit), allow: '*@TheScoop.com, mara@example.org' });
  expect(done.status).toBe(303);
  expect(await attached(agent)).toEqual([{ toolkit: 'Ruled refunds', rules: ['allow *@thescoop.com', 'allow mara@example.org'] }]);
  expect((await v.get(done.headers.location!)).text).toContain(
    'Ruled refunds attached: only senders matching *@thescoop.com, mara@example.org unlock it.',
  );
});

test('when the toolkit holds enhancement tools only, then it is attached with an open gate at once, with no confirmation', async () => {
  const agent = await makeAgent(t, { name: 'Enhanced desk', toolkit_ids: [] });
  const kit = await makeToolkit(t, 'Helpers', ['task_creator', 'reply_generator']);
  const done = await attach(agent, { toolkit_id: String(kit) });
  expect(done.status).toBe(303);
  expect(await attached(agent)).toEqual([{ toolkit: 'Helpers', rules: [] }]);
});

test('when the toolkit gains a gate tool after the confirmation was shown, then confirming asks again, naming it, and attaches nothing', async () => {
  const agent = await makeAgent(t, { name: 'Changing desk', toolkit_ids: [] });
  const kit = await makeToolkit(t, 'Growing kit', ['lookup_order']);
  const asked = await attach(agent, { toolkit_id: String(kit) });
  expect(hidden(asked.text, 'confirmed')).toBe('lookup_order');
  await t.tg.toolkits.update(kit, { member_tool_ids: ['lookup_order', 'process_refund'] });
  const again = await v.post(`/admin/agents/${agent}/toolkits`, {
    _csrf: hidden(asked.text, '_csrf')!,
    toolkit_id: String(kit),
    confirmed: 'lookup_order',
  });
  expect(again.status).toBe(200);
  expect(again.text).toContain('Growing kit has changed since you were asked: it now also holds process_refund.');
  expect(hidden(again.text, 'confirmed')).toBe('lookup_order,process_refund');
  expect(await attached(agent)).toEqual([]);
});

test('when the allow pattern is refused, then the reason shows beside Admit only, the choice is kept, and nothing is attached', async () => {
  const agent = await makeAgent(t, { name: 'Mistyped desk', toolkit_ids: [] });
  const kit = await makeToolkit(t, 'Mistyped kit', ['process_refund']);
  const refused = await attach(agent, { toolkit_id: String(kit), allow: '*thescoop.com' });
  expect(refused.status).toBe(422);
  expect(refused.text).toMatch(/id="allow-error">The pattern &quot;\*thescoop\.com&quot; has no @/);
  expect(refused.text).toContain(`<option value="${kit}" selected>Mistyped kit</option>`);
  expect(refused.text).toContain('value="*thescoop.com"');
  expect(await attached(agent)).toEqual([]);
});
