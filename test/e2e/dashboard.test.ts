// The operators' dashboard in headless Chromium, as an operator uses it: sign in, see who reaches
// each agent, build a toolkit from the checklist, grant it to Sundae (past the open gate's
// confirmation) behind an allow rule, see who gets what, meet a refused pattern's reason, read the
// caps' tool menu, require approval for refunds and approve Jane's, read a pending input on a wide
// window and a narrow one, run the enabled_tools dry run; and a form posted without its CSRF token
// is refused. Controls are found by their accessible names, so the test also checks that every one
// has one. TOOLGATE_SCREENSHOTS=1 saves each page to docs/screenshots (npm run screenshots).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { parsePattern } from '../../src/core/pattern';
import { ADMIN_TOKEN } from '../support/app';
import { browserAvailable, launchBrowser, type Browser } from './browser';
import { startService, type RunningService } from './server';

jest.setTimeout(120_000);

const SCREENSHOTS = process.env.TOOLGATE_SCREENSHOTS ? path.resolve(__dirname, '..', '..', 'docs', 'screenshots') : null;
const inBrowser = browserAvailable() ? describe : describe.skip;

inBrowser('the dashboard, in headless Chromium', () => {
  let service: RunningService;
  let browser: Browser;
  let page: Page;
  // Everything the pages asked for that a CSP refused, that failed, or that left this origin.
  const problems: string[] = [];

  const shoot = async (name: string, fullPage = true) => {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage });
  };
  const go = (where: string) => page.goto(`${service.url}${where}`);

  beforeAll(async () => {
    service = await startService();
    // A legacy agent whose string holds a typo, for the migration's report.
    await service.tg.agents.create({ name: 'Legacy desk', enabled_tools: 'email_analyzer, Task-Creator' });
    // A tool deleted from the code while a toolkit still names it: a stale member.
    await service.db.sequelize.query(
      `UPDATE toolkits SET member_tool_ids = array_append(member_tool_ids, 'fax_order') WHERE name = 'Operations'`,
    );
    // Jane asks Sundae for a refund she is not granted: a denied record.
    await fetch(`${service.url}/api/agents/1/tool-calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' }),
    });
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    // Pages answered 401, 403 or 422 on purpose; a style, script or image that fails does not.
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400 && r.request().resourceType() !== 'document') problems.push(`${r.status()}: ${r.url()}`);
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(service.url)) problems.push(`left the origin: ${r.url()}`);
    });
  });

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  test('when an operator signs in with the admin token, then the agents are listed, behind a Secure, HttpOnly, SameSite cookie', async () => {
    await go('/admin');
    await page.getByRole('heading', { name: 'Sign in to the dashboard' }).waitFor();
    await shoot('sign-in');
    await page.getByLabel('Admin token').fill('not-the-admin-token-at-all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That is not the admin token').waitFor();
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    expect(await page.getByRole('link', { name: 'Sundae', exact: true }).count()).toBe(1);
    const [cookie] = await browser.context.cookies();
    expect(cookie).toMatchObject({ name: '__Host-toolgate-admin', httpOnly: true, secure: true, sameSite: 'Strict', path: '/' });
    await shoot('agents');
  });

  test('when the agents are listed, then each says who reaches it, from its access rules', async () => {
    const whoReaches = async (name: string) =>
      await page
        .getByRole('row')
        .filter({ has: page.getByRole('link', { name, exact: true }) })
        .getByRole('cell')
        .first()
        .textContent();
    expect(await whoReaches('Scout')).toBe('Only *@thescoop.com');
    expect(await whoReaches('Sundae')).toBe('Every sender (no access rules)');
  });

  test('when the keyboard starts on a page, then the first stop skips to its content', async () => {
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
  });

  test('when a form is posted without its CSRF token, then it is refused and nothing changes', async () => {
    await go('/admin/toolkits/new');
    await page.getByLabel('Name').fill('Forged');
    await page.locator('#main input[name="_csrf"]').evaluate((input) => input.remove());
    const answer = page.waitForResponse((r) => r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Create toolkit' }).click();
    expect((await answer).status()).toBe(403);
    await page.getByText('This form was not sent from a dashboard page').waitFor();
    await go('/admin/toolkits');
    expect(await page.getByRole('link', { name: 'Forged' }).count()).toBe(0);
  });

  test('when an operator creates a toolkit from the checklist, then it is listed with its member, beside stale members shown as such', async () => {
    await go('/admin/toolkits');
    const operations = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'Operations', exact: true }) });
    expect(await operations.getByText('fax_order (no longer registered)').count()).toBe(1);
    await shoot('toolkits');
    await page.getByRole('link', { name: 'New toolkit' }).click();
    await page.getByLabel('Name').fill('Outreach');
    await page.getByLabel('Description').fill('Mail out to the shop and its customers.');
    await page.getByRole('checkbox', { name: 'Send email', exact: true }).check();
    await shoot('new-toolkit');
    await page.getByRole('button', { name: 'Create toolkit' }).click();
    await page.getByRole('status').filter({ hasText: 'Toolkit Outreach created' }).waitFor();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'Outreach', exact: true }) });
    expect(await row.getByText('Send email').count()).toBe(1);
  });

  test('when an operator attaches the toolkit with an open gate, then a page says who would get what, and Cancel attaches nothing', async () => {
    await go('/admin/agents');
    await page.getByRole('link', { name: 'Sundae', exact: true }).click();
    await page.getByRole('heading', { name: 'Agent Toolkits' }).waitFor();
    const toolkit = page.getByLabel('Toolkit', { exact: true });
    expect(await toolkit.inputValue()).toBe('');
    await toolkit.selectOption({ label: 'Outreach' });
    await page.getByRole('button', { name: 'Attach toolkit' }).click();
    await page.getByRole('heading', { name: 'Attach Outreach to Sundae with an open gate?' }).waitFor();
    expect(await page.getByText('Every sender who reaches Sundae would be offered send_email').count()).toBe(1);
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.getByRole('heading', { name: 'Agent Toolkits' }).waitFor();
    expect(await page.getByRole('rowheader', { name: 'Outreach' }).count()).toBe(0);
  });

  test('when the toolkit is attached to Sundae with the allow rule *@thescoop.com, then her page lists it behind that rule', async () => {
    await page.getByLabel('Toolkit', { exact: true }).selectOption({ label: 'Outreach' });
    await page.getByRole('button', { name: 'Attach toolkit' }).click();
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('heading', { name: 'Configure Access Settings' }).waitFor();
    await page.getByLabel('Kind').selectOption('allow');
    await page.getByLabel('Pattern').fill('*@thescoop.com');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('status').filter({ hasText: 'Rule added: allow *@thescoop.com' }).waitFor();
    await shoot('configure-access-settings');
    await page.getByRole('link', { name: 'Back to Sundae' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Outreach' }) });
    expect(await row.getByText('*@thescoop.com').count()).toBe(1);
    await shoot('agent');
  });

  test('when a pattern is refused, then the reason is shown next to the Pattern field, and the field says it is invalid', async () => {
    await page.getByRole('link', { name: 'Configure Access Settings of Outreach' }).click();
    await page.getByLabel('Pattern').fill('<mara@thescoop.com>');
    await page.getByRole('button', { name: 'Add rule' }).click();
    const reason = parsePattern('<mara@thescoop.com>');
    if (reason.ok) throw new Error('the pattern was expected to be refused');
    const field = page.getByLabel('Pattern');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`#${await field.getAttribute('aria-describedby').then((ids) => ids!.split(' ').pop())}`).textContent()).toBe(
      reason.reason,
    );
    expect(await field.inputValue()).toBe('<mara@thescoop.com>');
    await shoot('refused-pattern');
  });

  test('when the switch Allow on scheduled runs is saved, then it stays on', async () => {
    await page.getByRole('checkbox', { name: 'Allow on scheduled runs' }).check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'offered to scheduled runs' }).waitFor();
    expect(await page.getByRole('checkbox', { name: 'Allow on scheduled runs' }).isChecked()).toBe(true);
  });

  test("when Scout's Operations caps are opened, then the tool menu shows each tool's full name, uncut", async () => {
    await go('/admin/agents');
    await page.getByRole('link', { name: 'Scout', exact: true }).click();
    await page.getByRole('link', { name: 'Configure Access Settings of Operations' }).click();
    const menu = page.getByLabel('Tool', { exact: true });
    expect(await menu.locator('option').allTextContents()).toEqual([
      'All its members together',
      'Check flavor stock (check_flavor_stock)',
      'Send email (send_email)',
      'fax_order (no longer registered)',
    ]);
    // A menu only as wide as its longest option needs (Chromium's own width for it, with its arrow):
    // the menu on the page must be at least that wide, or an option is cut off.
    const { shown, needed } = await menu.evaluate((select: HTMLSelectElement) => {
      const free = select.cloneNode(true) as HTMLSelectElement;
      free.style.cssText = 'width: auto; min-width: 0; max-width: none; position: absolute; visibility: hidden';
      document.body.append(free);
      const sizes = { shown: select.getBoundingClientRect().width, needed: free.getBoundingClientRect().width };
      free.remove();
      return sizes;
    });
    expect(shown).toBeGreaterThanOrEqual(needed - 0.5);
  });

  test('when Who gets what checks jane@acme.com, then Send email is not offered; for Mara+billing@TheScoop.com it is, and why', async () => {
    await page.getByRole('link', { name: 'Who gets what', exact: true }).click();
    await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'Sundae' });
    await page.getByLabel('Sender', { exact: true }).fill('jane@acme.com');
    await page.getByRole('button', { name: 'Check' }).click();
    const offered = page.locator('ul.offered');
    await page.getByRole('heading', { name: 'A message from jane@acme.com to Sundae' }).waitFor();
    expect(await offered.getByText('Send email').count()).toBe(0);
    expect(await offered.getByText('Look up order').count()).toBe(1);
    const outreach = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Outreach' }) });
    expect(await outreach.textContent()).toContain('Not admitted');
    expect(await outreach.textContent()).toContain('The gate has allow rules, and none matches this sender.');
    await shoot('who-gets-what-jane');

    await page.getByLabel('Sender', { exact: true }).fill('Mara+billing@TheScoop.com');
    await page.getByRole('button', { name: 'Check' }).click();
    await page.getByRole('heading', { name: 'A message from Mara+billing@TheScoop.com to Sundae' }).waitFor();
    expect(await page.getByText('mara@thescoop.com', { exact: true }).count()).toBe(1);
    expect(await offered.getByText('Send email').count()).toBe(1);
    expect(await offered.getByText('Process refund').count()).toBe(1);
    expect(await outreach.textContent()).toContain('The allow rule *@thescoop.com matches this sender.');
    await shoot('who-gets-what');
  });

  test('when Tool calls is filtered to denied, then only the refusals show, and they stand out', async () => {
    await page.getByRole('link', { name: 'Tool calls', exact: true }).click();
    await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'Sundae' });
    await page.getByLabel('Status').selectOption('denied');
    await page.getByRole('button', { name: 'Show' }).click();
    const rows = page.locator('tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    expect(await rows.first().getAttribute('class')).toBe('refused');
    expect(await rows.first().textContent()).toContain('process_refund');
    await shoot('tool-calls');
  });

  test('when the enabled_tools dry run is started, then its report lists the typo token with its likely id, and nothing changed', async () => {
    await page.getByRole('link', { name: 'Migrate enabled_tools' }).click();
    await shoot('migrate-enabled-tools');
    await page.getByRole('button', { name: 'Run dry run' }).click();
    await page.getByRole('heading', { name: 'Report: nothing was changed' }).waitFor({ timeout: 30_000 });
    const typo = page.getByRole('row').filter({ hasText: 'Task-Creator' });
    expect(await typo.textContent()).toContain('task_creator');
    expect(await page.getByRole('button', { name: 'Apply the migration' }).count()).toBe(1);
    await shoot('migration-dry-run');
  });

  test("when an operator requires approval for Sundae's Finance toolkit and opens its gate, then the page says who approves", async () => {
    await go('/admin/agents');
    await page.getByRole('link', { name: 'Sundae', exact: true }).click();
    await page.getByRole('link', { name: 'Configure Access Settings of Finance' }).click();
    await page.getByRole('button', { name: 'Remove allow rule *@thescoop.com' }).click();
    // Removing the gate's last allow rule opens it: its confirmation page says so before Remove.
    await page.getByRole('heading', { name: 'Remove the allow rule *@thescoop.com?', level: 1 }).waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/^Every sender would get .*process_refund/);
    await page.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Rule removed' }).waitFor();
    await page.getByRole('checkbox', { name: 'Require approval' }).check();
    await page.getByLabel('Approvers').fill('*@TheScoop.com');
    await page.getByRole('button', { name: 'Save approval' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved: approvers: *@thescoop.com' }).waitFor();
    expect(await page.getByText('On: approvers are *@thescoop.com.').count()).toBe(1);
    expect(await page.getByRole('checkbox', { name: 'Require approval' }).isChecked()).toBe(true);
  });

  test("when Jane's refund waits for approval, then Approvals lists it with its exact input, and Approve runs it once", async () => {
    const sent = await fetch(`${service.url}/api/agents/1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        message: { from: 'Jane <jane@acme.com>', subject: 'Melted order', body: 'Order SCP-1042 arrived melted. I would like a refund.' },
      }),
    });
    const answer = (await sent.json()) as { steps: { tool: string; status: string; approval_request_id?: number }[] };
    const request = answer.steps.find((s) => s.tool === 'process_refund')?.approval_request_id;
    expect(answer.steps.find((s) => s.tool === 'process_refund')?.status).toBe('pending_approval');

    await page.getByRole('link', { name: 'Approvals', exact: true }).click();
    await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'Sundae' });
    await page.getByLabel('Status').selectOption('pending');
    await page.getByRole('button', { name: 'Show' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: new RegExp(`^Request ${request}`) }) });
    expect(await row.textContent()).toContain('process_refund');
    expect(await row.locator('pre').textContent()).toBe('{\n  "order_id": "SCP-1042"\n}');
    expect(await row.textContent()).toContain('jane@acme.com');
    await shoot('approvals');

    await row.getByRole('button', { name: `Approve request ${request}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Request ${request} approved: process_refund ran once.` })
      .waitFor();
    const [refunds] = await service.db.sequelize.query("SELECT count(*)::int AS n FROM scoop_refunds WHERE order_id = 'SCP-1042'");
    expect(refunds).toEqual([{ n: 1 }]);
    await page.getByLabel('Status').selectOption('approved');
    await page.getByRole('button', { name: 'Show' }).click();
    const decided = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: new RegExp(`^Request ${request}`) }) });
    expect(await decided.textContent()).toContain('By an operator (dashboard)');
    expect(await decided.textContent()).toContain('"refunded":true');
    expect(await decided.getByRole('button').count()).toBe(0);
  });

  test('when a pending input is read on a wide window or a narrow one, then no value and no decision code breaks across lines, the input shows whole, and the page does not scroll sideways', async () => {
    const filed = await fetch(`${service.url}/api/agents/1/tool-calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'process_refund', input: { order_id: 'SCP-1043' }, sender: 'jane@acme.com' }),
    });
    expect(filed.status).toBe(202);
    const request = ((await filed.json()) as { approval_request_id: number }).approval_request_id;
    await go('/admin/approvals?agent=1&status=pending');
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: new RegExp(`^Request ${request}`) }) });
    const code = (await row.locator('code.decision-code').textContent())!;
    // How many lines a piece of the row's text takes: the distinct tops of the boxes its range lays out in.
    const laidOut = (text: string) =>
      row.evaluate((tr, wanted) => {
        const walker = document.createTreeWalker(tr, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const at = node.textContent!.indexOf(wanted);
          if (at < 0) continue;
          const range = document.createRange();
          range.setStart(node, at);
          range.setEnd(node, at + wanted.length);
          const rects = [...range.getClientRects()].filter((r) => r.width > 0);
          return { lines: new Set(rects.map((r) => Math.round(r.top))).size, height: range.getBoundingClientRect().height };
        }
        return null;
      }, text);
    try {
      // The operator's laptop (where the value broke in two) and a phone.
      for (const width of [1280, 360]) {
        await page.setViewportSize({ width, height: 740 });
        const input = row.locator('pre');
        const lineHeight = await input.evaluate((pre) => parseFloat(getComputedStyle(pre).lineHeight));
        const value = await laidOut('"SCP-1043"');
        expect({ width, lines: value?.lines, oneLineHigh: value!.height < lineHeight * 1.5 }).toEqual({
          width,
          lines: 1,
          oneLineHigh: true,
        });
        expect({ width, codeLines: (await laidOut(code))?.lines }).toEqual({ width, codeLines: 1 });
        // Whole: nothing of the input hides behind its own scroll, and the page is no wider than the window.
        expect(await input.evaluate((pre) => pre.scrollWidth <= pre.clientWidth)).toBe(true);
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  test('when an operator signs out, then the pages ask for the token again', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the dashboard' }).waitFor();
    await go('/admin/toolkits');
    await page.getByRole('heading', { name: 'Sign in to the dashboard' }).waitFor();
  });

  test('when the API reference is opened and an operation expanded, then it renders from this origin alone', async () => {
    await go('/docs');
    await page.getByText('Create a toolkit').first().click();
    await page.getByText('Request body').first().waitFor();
    await page
      .getByRole('button', { name: 'Schema' })
      .first()
      .click()
      .catch(() => undefined);
    await shoot('api-reference', false);
  });

  test('then no page broke its CSP, logged an error, or reached another origin', () => {
    expect(problems).toEqual([]);
  });
});
