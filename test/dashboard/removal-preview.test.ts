// The dashboard's one-click removals (a gate rule, an access rule, a cap, Detach) show their policy preview
// on a confirmation page first (SEMANTICS §15): the page writes nothing, its Remove or Detach makes
// the change, Cancel leads back with nothing changed, and it needs the session and its CSRF token.
import { QueryTypes } from 'sequelize';
import { CLIENT_TOKEN, createTestApp, type TestApp } from '../support/app';
import { desk, previewSection, state, type Desk } from './preview-desk';
import { signedIn, visitor, type Visitor } from './session';

let t: TestApp;
let v: Visitor;

beforeAll(async () => {
  t = await createTestApp({ dashboard: true });
  v = await signedIn(t.app);
});
afterAll(() => t.close());

/** A gate rule added to the desk's attachment after Jane's call was recorded; its id. */
async function gateRule(d: Desk, kind: 'allow' | 'deny', pattern: string): Promise<number> {
  return (await t.tg.attachments.addRule(d.agent, d.attachment, { kind, pattern })).id;
}

/**
 * Caps set on the desk's attachment (each per sender, per day unless it says), then two lookup_order calls of Mara's:
 * the first runs and, under a cap of one, the second is refused over it; the second's id.
 */
async function capped(
  d: Desk,
  caps: { tool_id: string | null; limit: number; window?: string }[] = [{ tool_id: 'lookup_order', limit: 1 }],
) {
  await t.tg.attachments.update(d.agent, d.attachment, { caps: caps.map((c) => ({ window: '1d', ...c, per: 'sender' })) });
  for (const order_id of ['SCP-2001', 'SCP-2002'])
    await t
      .client()
      .post(`/api/agents/${d.agent}/tool-calls`)
      .send({ tool: 'lookup_order', input: { order_id }, sender: 'mara@thescoop.com' });
  const [row] = await t.sequelize.query<{ id: string }>('SELECT max(id) AS id FROM tool_calls WHERE agent_id = :agent', {
    replacements: { agent: d.agent },
    type: QueryTypes.SELECT,
  });
  return Number(row!.id);
}

const confirmForm = (html: string) => /<form[^>]*aria-label="Confirm: [^"]*"[\s\S]*?<\/form>/.exec(html)?.[0] ?? '';

describe("when an operator presses Remove on a gate's last allow rule", () => {
  test('then the confirmation page says in plain words that every sender would get its tools, and shows who would gain them', async () => {
    const d = await desk(t, 'Removal desk');
    const rule = await gateRule(d, 'allow', '*@thescoop.com');
    const res = await v.post(`${d.page}/rules/${rule}/delete`, { _csrf: await v.token(d.page) });
    expect(res.status).toBe(200);
    expect(res.text).toContain('Remove the allow rule *@thescoop.com?');
    expect(res.text).toMatch(
      /<p class="warning-text" role="alert">Every sender would get check_flavor_stock and lookup_order, on every message: with no rule left, the gate is open and checks no one.<\/p>/,
    );
    const shown = previewSection(res.text);
    expect(shown).toContain('<h2 id="preview-heading">If you remove it</h2>');
    expect(shown).toContain('jane@acme.com would gain check_flavor_stock and lookup_order (1 run in the last 7 days).');
    expect(shown).toContain('Nothing has been removed yet. Remove makes it live at once.');
    // The warning comes first, then the preview, then Remove and Cancel.
    expect(res.text.indexOf('warning-text')).toBeLessThan(res.text.indexOf('If you remove it'));
    const form = confirmForm(res.text);
    expect(res.text.indexOf('If you remove it')).toBeLessThan(res.text.indexOf(form));
    expect(form).toContain(`action="${d.page}/rules/${rule}/delete"`);
    expect(form).toContain('<input type="hidden" name="confirmed" value="yes"/>');
    expect(form).toContain('>Remove</button>');
    expect(form).toContain(`<a href="${d.page}#gate">Cancel</a>`);
  });

  test('then the confirmation writes nothing: every row count and every policy version stay as they were, and the rule stays', async () => {
    const d = await desk(t, 'Removal desk');
    const rule = await gateRule(d, 'allow', '*@thescoop.com');
    const token = await v.token(d.page);
    const before = await state(t);
    const res = await v.post(`${d.page}/rules/${rule}/delete`, { _csrf: token });
    expect(res.status).toBe(200);
    expect(await state(t)).toEqual(before);
    expect((await t.tg.attachments.get(d.agent, d.attachment)).rules.map((r) => r.id)).toEqual([rule]);
  });

  test("then the confirmation page's Remove removes the rule, as Remove did before", async () => {
    const d = await desk(t, 'Removal desk');
    const rule = await gateRule(d, 'allow', '*@thescoop.com');
    const res = await v.post(`${d.page}/rules/${rule}/delete`, { _csrf: await v.token(d.page), confirmed: 'yes' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(d.page);
    expect((await t.tg.attachments.get(d.agent, d.attachment)).rules).toEqual([]);
    expect((await v.get(d.page)).text).toContain('Rule removed.');
  });

  test('then Cancel leads back to the gate with the rule still in it', async () => {
    const d = await desk(t, 'Removal desk');
    const rule = await gateRule(d, 'allow', '*@thescoop.com');
    const res = await v.post(`${d.page}/rules/${rule}/delete`, { _csrf: await v.token(d.page) });
    const cancel = /<a href="([^"]+)">Cancel<\/a>/.exec(confirmForm(res.text))![1]!;
    const back = await v.get(cancel.replace(/#.*$/, ''));
    expect(back.status).toBe(200);
    expect(back.text).toContain('aria-label="Remove allow rule *@thescoop.com"');
    expect((await t.tg.attachments.get(d.agent, d.attachment)).rules.map((r) => r.id)).toEqual([rule]);
  });
});

describe('when an operator presses Remove on a gate rule that leaves the gate shut to someone', () => {
  test('then a deny rule removed beside an allow rule shows who would gain the tools, with no word of an open gate', async () => {
    const d = await desk(t, 'Removal desk');
    await gateRule(d, 'allow', '*@acme.com');
    const rule = await gateRule(d, 'deny', 'jane@acme.com');
    const res = await v.post(`${d.page}/rules/${rule}/delete`, { _csrf: await v.token(d.page) });
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('warning-text');
    expect(previewSection(res.text)).toContain('jane@acme.com would gain check_flavor_stock and lookup_order');
  });

  test('then an allow rule removed beside a deny rule says every sender but those denied would get the tools', async () => {
    const d = await desk(t, 'Removal desk');
    const allow = await gateRule(d, 'allow', 'jane@acme.com');
    await gateRule(d, 'deny', 'intern@thescoop.com');
    const res = await v.post(`${d.page}/rules/${allow}/delete`, { _csrf: await v.token(d.page) });
    expect(res.text).toContain(
      'Every sender but those matching intern@thescoop.com would get check_flavor_stock and lookup_order: with no allow rule left, the gate admits anyone its deny rules do not match.',
    );
  });

  test("then a block-list's last deny rule says that every sender would get the tools, the gate being open", async () => {
    const d = await desk(t, 'Removal desk');
    const rule = await gateRule(d, 'deny', '*@acme.com');
    const res = await v.post(`${d.page}/rules/${rule}/delete`, { _csrf: await v.token(d.page) });
    expect(res.text).toContain(
      'Every sender would get check_flavor_stock and lookup_order, on every message: with no rule left, the gate is open and checks no one.',
    );
    expect(previewSection(res.text)).toContain('jane@acme.com would gain check_flavor_stock and lookup_order');
  });

  test('then a rule pattern holding markup is shown escaped, never as markup', async () => {
    const d = await desk(t, 'Removal desk');
    // Stored as the database holds it, past the service's check: the page must escape whatever it reads.
    const [row] = await t.sequelize.query<{ id: number }>(
      `INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern) VALUES (:attachment, 'allow', '<script>alert(1)</script>@x.com') RETURNING id`,
      { replacements: { attachment: d.attachment }, type: QueryTypes.SELECT },
    );
    const res = await v.post(`${d.page}/rules/${row!.id}/delete`, { _csrf: await v.token(d.page) });
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('<script>alert(1)</script>');
    expect(res.text).toContain('<h1>Remove the allow rule &lt;script>alert(1)&lt;/script>@x.com?</h1>');
  });

  test('then a rule of another attachment, or none, is not found and nothing is removed', async () => {
    const d = await desk(t, 'Removal desk');
    const other = await desk(t, 'Removal desk');
    const rule = await gateRule(other, 'allow', '*@thescoop.com');
    const token = await v.token(d.page);
    expect((await v.post(`${d.page}/rules/${rule}/delete`, { _csrf: token })).status).toBe(404);
    expect((await v.post(`${d.page}/rules/999999/delete`, { _csrf: token })).status).toBe(404);
    expect((await t.tg.attachments.get(other.agent, other.attachment)).rules.map((r) => r.id)).toEqual([rule]);
  });
});

describe("when an operator presses Remove on an agent's access rule", () => {
  test('then the confirmation page shows who would reach the agent again, writes nothing, and its Remove removes the rule', async () => {
    const d = await desk(t, 'Removal desk');
    const rule = await t.tg.accessRules.add(d.agent, { kind: 'deny', pattern: '*@acme.com' });
    const page = `/admin/agents/${d.agent}`;
    const token = await v.token(page);
    const before = await state(t);
    const res = await v.post(`${page}/access-rules/${rule.id}/delete`, { _csrf: token });
    expect(res.status).toBe(200);
    expect(await state(t)).toEqual(before);
    expect(res.text).toContain('Remove the access rule deny *@acme.com?');
    expect(previewSection(res.text)).toContain('jane@acme.com would gain check_flavor_stock and lookup_order (1 run in the last 7 days).');
    expect(confirmForm(res.text)).toContain(`<a href="${page}#access-rules">Cancel</a>`);
    const removed = await v.post(`${page}/access-rules/${rule.id}/delete`, { _csrf: token, confirmed: 'yes' });
    expect(removed.status).toBe(303);
    expect(await t.tg.accessRules.list(d.agent)).toEqual([]);
  });

  test('then removing the last allow rule says in plain words that every sender would reach the agent', async () => {
    const d = await desk(t, 'Removal desk');
    const rule = await t.tg.accessRules.add(d.agent, { kind: 'allow', pattern: '*@thescoop.com' });
    const page = `/admin/agents/${d.agent}`;
    const res = await v.post(`${page}/access-rules/${rule.id}/delete`, { _csrf: await v.token(page) });
    expect(res.text).toContain(
      `Every sender would reach ${d.name}: with no allow rule left, its access rules admit anyone they do not deny.`,
    );
    expect(previewSection(res.text)).toContain('jane@acme.com would gain');
    expect((await t.tg.accessRules.list(d.agent)).map((r) => r.id)).toEqual([rule.id]);
  });
});

describe('when an operator presses Detach', () => {
  test('then the confirmation page shows who would lose the tools and the call it would refuse, linked to its record, and writes nothing', async () => {
    const d = await desk(t, 'Removal desk');
    const token = await v.token(d.page);
    const before = await state(t);
    const res = await v.post(`${d.page}/detach`, { _csrf: token });
    expect(res.status).toBe(200);
    expect(await state(t)).toEqual(before);
    expect(res.text).toContain(`Detach ${d.name} from ${d.name}?`);
    const shown = previewSection(res.text);
    expect(shown).toContain('<h2 id="preview-heading">If you detach it</h2>');
    expect(shown).toContain('jane@acme.com would lose check_flavor_stock and lookup_order (1 run in the last 7 days).');
    expect(shown).toContain('<th scope="col">If detached</th>');
    expect(shown).toMatch(
      new RegExp(`<a href="/admin/tool-calls\\?agent=${d.agent}&amp;after=[A-Za-z0-9_-]+#call-${d.janeCall}">Call ${d.janeCall}</a>`),
    );
    const form = confirmForm(res.text);
    expect(form).toContain('>Detach</button>');
    expect(form).toContain(`<a href="${d.page}#detach">Cancel</a>`);
    expect((await t.tg.attachments.list(d.agent)).map((a) => a.id)).toEqual([d.attachment]);
  });

  test("then the confirmation page's Detach detaches, as Detach did before", async () => {
    const d = await desk(t, 'Removal desk');
    const res = await v.post(`${d.page}/detach`, { _csrf: await v.token(d.page), confirmed: 'yes' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/admin/agents/${d.agent}`);
    expect(await t.tg.attachments.list(d.agent)).toEqual([]);
  });
});

describe("when an operator presses Remove on a tool's last cap", () => {
  test('then the confirmation page says in plain words that the tool would have no limit, and shows the call over the cap that would have run', async () => {
    const d = await desk(t, 'Removal desk');
    const call = await capped(d);
    const res = await v.post(`${d.page}/caps/0/delete`, { _csrf: await v.token(d.page) });
    expect(res.status).toBe(200);
    expect(res.text).toContain('<h1>Remove the cap of 1 lookup_order call per sender per 1d?</h1>');
    expect(res.text).toContain(
      `<p class="warning-text" role="alert">lookup_order would have no limit for ${d.name}: with no cap of ${d.name} left on it, its calls would run as often as they are asked.</p>`,
    );
    const shown = previewSection(res.text);
    expect(shown).toContain('<h2 id="preview-heading">If you remove it</h2>');
    expect(shown).toContain('1 recorded call would be decided otherwise: 1 would run.');
    expect(shown).toMatch(
      new RegExp(
        `<a href="/admin/tool-calls\\?agent=${d.agent}&amp;after=[A-Za-z0-9_-]+#call-${call}">Call ${call}</a></td><td>[^<]+</td><td><code>lookup_order</code></td><td>mara@thescoop.com</td><td>denied</td><td>would run</td>`,
      ),
    );
    expect(shown).toContain('<th scope="col">If removed</th>');
    // The line comes first, then the preview, then Remove and Cancel.
    expect(res.text.indexOf('warning-text')).toBeLessThan(res.text.indexOf('If you remove it'));
    const form = confirmForm(res.text);
    expect(res.text.indexOf('If you remove it')).toBeLessThan(res.text.indexOf(form));
    expect(form).toContain(`action="${d.page}/caps/0/delete"`);
    expect(form).toContain('<input type="hidden" name="confirmed" value="yes"/>');
    expect(form).toContain('<input type="hidden" name="cap" value="lookup_order 1 per sender per 1d"/>');
    expect(form).toContain('>Remove</button>');
    expect(form).toContain(`<a href="${d.page}#caps">Cancel</a>`);
  });

  test('then the confirmation writes nothing: every row count and every policy version stay as they were, and the cap stays', async () => {
    const d = await desk(t, 'Removal desk');
    await capped(d);
    const token = await v.token(d.page);
    const before = await state(t);
    const res = await v.post(`${d.page}/caps/0/delete`, { _csrf: token });
    expect(res.status).toBe(200);
    expect(await state(t)).toEqual(before);
    expect((await t.tg.attachments.get(d.agent, d.attachment)).caps).toEqual([
      { tool_id: 'lookup_order', per: 'sender', limit: 1, window: '1d' },
    ]);
  });

  test("then the confirmation page's Remove removes the cap, as Remove did before", async () => {
    const d = await desk(t, 'Removal desk');
    await capped(d);
    const res = await v.post(`${d.page}/caps/0/delete`, { _csrf: await v.token(d.page), confirmed: 'yes' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${d.page}#caps`);
    expect((await t.tg.attachments.get(d.agent, d.attachment)).caps).toEqual([]);
    expect((await v.get(d.page)).text).toContain('Cap removed.');
  });

  test('then Cancel leads back to the caps with the cap still in them', async () => {
    const d = await desk(t, 'Removal desk');
    await capped(d);
    const res = await v.post(`${d.page}/caps/0/delete`, { _csrf: await v.token(d.page) });
    const cancel = /<a href="([^"]+)">Cancel<\/a>/.exec(confirmForm(res.text))![1]!;
    expect(cancel).toBe(`${d.page}#caps`);
    const back = await v.get(cancel.replace(/#.*$/, ''));
    expect(back.status).toBe(200);
    expect(back.text).toContain('aria-label="Remove the cap of 1 per sender per 1d"');
    expect((await t.tg.attachments.get(d.agent, d.attachment)).caps).toHaveLength(1);
  });
});

describe('when an operator presses Remove on a cap that leaves its tools capped, or on a cap of all members', () => {
  test('then a cap beside another cap of the same tool shows its preview with no word of a tool left without a limit', async () => {
    const d = await desk(t, 'Removal desk');
    const call = await capped(d, [
      { tool_id: 'lookup_order', limit: 1 },
      { tool_id: 'lookup_order', limit: 5, window: '7d' },
    ]);
    const res = await v.post(`${d.page}/caps/0/delete`, { _csrf: await v.token(d.page) });
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('warning-text');
    expect(previewSection(res.text)).toContain(`#call-${call}">Call ${call}</a>`);
  });

  test("then a cap of all members together, the toolkit's last, says that each member would have no limit", async () => {
    const d = await desk(t, 'Removal desk');
    await capped(d, [{ tool_id: null, limit: 1 }]);
    const res = await v.post(`${d.page}/caps/0/delete`, { _csrf: await v.token(d.page) });
    expect(res.text).toContain('<h1>Remove the cap of 1 call of its tools per sender per 1d?</h1>');
    expect(res.text).toContain(
      `check_flavor_stock and lookup_order would have no limit for ${d.name}: with no cap of ${d.name} left on them, their calls would run as often as they are asked.`,
    );
  });

  test('then a Remove confirmed after another cap took its place is a 409 and removes nothing', async () => {
    const d = await desk(t, 'Removal desk');
    await capped(d, [
      { tool_id: 'lookup_order', limit: 1 },
      { tool_id: 'check_flavor_stock', limit: 2 },
    ]);
    const res = await v.post(`${d.page}/caps/0/delete`, { _csrf: await v.token(d.page) });
    const shown = /name="cap" value="([^"]+)"/.exec(confirmForm(res.text))![1]!;
    // Meanwhile the lookup_order cap goes another way, and check_flavor_stock's moves to its place.
    await t.tg.attachments.update(d.agent, d.attachment, {
      caps: [{ tool_id: 'check_flavor_stock', per: 'sender', limit: 2, window: '1d' }],
    });
    const stale = await v.post(`${d.page}/caps/0/delete`, { _csrf: await v.token(d.page), confirmed: 'yes', cap: shown });
    expect(stale.status).toBe(409);
    expect(stale.text).toContain('The caps changed since this removal was shown, so nothing was removed');
    expect((await t.tg.attachments.get(d.agent, d.attachment)).caps).toEqual([
      { tool_id: 'check_flavor_stock', per: 'sender', limit: 2, window: '1d' },
    ]);
  });

  test('then a place that holds no cap is not found and nothing is removed', async () => {
    const d = await desk(t, 'Removal desk');
    await capped(d);
    const token = await v.token(d.page);
    for (const index of ['1', '-1', 'x']) expect((await v.post(`${d.page}/caps/${index}/delete`, { _csrf: token })).status).toBe(404);
    expect((await t.tg.attachments.get(d.agent, d.attachment)).caps).toHaveLength(1);
  });
});

describe('when a removal is asked for without the right to', () => {
  test('then one without the CSRF token is refused, confirmed or not, and removes nothing', async () => {
    const d = await desk(t, 'Removal desk');
    const rule = await gateRule(d, 'allow', '*@thescoop.com');
    const access = await t.tg.accessRules.add(d.agent, { kind: 'deny', pattern: 'x@y.com' });
    const forged = [
      await v.post(`${d.page}/rules/${rule}/delete`, {}),
      await v.post(`${d.page}/rules/${rule}/delete`, { confirmed: 'yes' }),
      await v.post(`/admin/agents/${d.agent}/access-rules/${access.id}/delete`, { confirmed: 'yes' }),
      await v.post(`${d.page}/detach`, {}),
      await v.post(`${d.page}/detach`, { confirmed: 'yes' }),
    ];
    for (const res of forged) {
      expect(res.status).toBe(403);
      expect(res.text).toContain('This form was not sent from a dashboard page');
      expect(previewSection(res.text)).toBe('');
    }
    expect((await t.tg.attachments.get(d.agent, d.attachment)).rules.map((r) => r.id)).toEqual([rule]);
    expect((await t.tg.accessRules.list(d.agent)).map((r) => r.id)).toEqual([access.id]);
  });

  test('then one who is not the admin cannot sign in, and signed out is told to sign in, with no preview and nothing removed', async () => {
    const d = await desk(t, 'Removal desk');
    const rule = await gateRule(d, 'allow', '*@thescoop.com');
    const stranger = visitor(t.app);
    const refused = await stranger.post('/admin/sign-in', { _csrf: await stranger.token('/admin/sign-in'), token: CLIENT_TOKEN });
    expect(refused.status).toBe(401);
    const token = await stranger.token('/admin/sign-in');
    const asked = await stranger.post(`${d.page}/rules/${rule}/delete`, { _csrf: token });
    const confirmed = await stranger.post(`${d.page}/detach`, { _csrf: token, confirmed: 'yes' });
    expect([asked.status, confirmed.status]).toEqual([401, 401]);
    expect(previewSection(asked.text) + previewSection(confirmed.text)).toBe('');
    expect((await t.tg.attachments.list(d.agent)).map((a) => a.rules.map((r) => r.id))).toEqual([[rule]]);
  });

  test("then a cap's Remove without the CSRF token is refused, confirmed or not, and removes nothing", async () => {
    const d = await desk(t, 'Removal desk');
    await capped(d);
    for (const form of [{}, { confirmed: 'yes' }] as Record<string, string>[]) {
      const res = await v.post(`${d.page}/caps/0/delete`, form);
      expect(res.status).toBe(403);
      expect(res.text).toContain('This form was not sent from a dashboard page');
      expect(previewSection(res.text)).toBe('');
    }
    expect((await t.tg.attachments.get(d.agent, d.attachment)).caps).toHaveLength(1);
  });

  test("then a cap's Remove signed out is told to sign in, confirmed or not, with no preview and nothing removed", async () => {
    const d = await desk(t, 'Removal desk');
    await capped(d);
    const stranger = visitor(t.app);
    const token = await stranger.token('/admin/sign-in');
    const asked = await stranger.post(`${d.page}/caps/0/delete`, { _csrf: token });
    const confirmed = await stranger.post(`${d.page}/caps/0/delete`, { _csrf: token, confirmed: 'yes' });
    expect([asked.status, confirmed.status]).toEqual([401, 401]);
    expect(previewSection(asked.text) + previewSection(confirmed.text)).toBe('');
    expect((await t.tg.attachments.get(d.agent, d.attachment)).caps).toHaveLength(1);
  });
});
