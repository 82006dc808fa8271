// The forms' Preview and "Try as candidate" (SEMANTICS §15) in headless Chromium, on The Scoop's
// demo: an operator previews a change of the Support toolkit, a deny rule on Sundae's Support and
// an access rule, reads who would lose what and follows a changed call to its record, then saves;
// and tries approval on Sundae's Finance as candidate, reads its shadow, promotes it, and drops
// another candidate; then removes a gate rule and a cap and cancels a Detach through their
// confirmation pages' previews. Controls are found by their accessible names, each form's by the form's name.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { QueryTypes } from 'sequelize';
import { ADMIN_TOKEN } from '../support/app';
import { browserAvailable, launchBrowser, type Browser } from './browser';
import { startService, type RunningService } from './server';

jest.setTimeout(120_000);

const SCREENSHOTS = process.env.TOOLGATE_SCREENSHOTS ? path.resolve(__dirname, '..', '..', 'docs', 'screenshots') : null;
const inBrowser = browserAvailable() ? describe : describe.skip;

inBrowser("the forms' preview and candidate terms, in headless Chromium", () => {
  let service: RunningService;
  let browser: Browser;
  let page: Page;
  let janeLookup = 0;
  const problems: string[] = [];

  const go = (where: string) => page.goto(`${service.url}${where}`);
  const shoot = async (name: string) => {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
  };
  /** A tool call through the dispatch path, as a client sends it; its record's id. */
  const call = async (tool: string, input: Record<string, unknown>, sender: string) => {
    const res = await fetch(`${service.url}/api/agents/1/tool-calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tool, input, sender }),
    });
    const [row] = await service.db.sequelize.query<{ id: string }>('SELECT max(id) AS id FROM tool_calls WHERE agent_id = 1', {
      type: QueryTypes.SELECT,
    });
    return { status: res.status, id: Number(row!.id) };
  };
  const configure = async (toolkit: string) => {
    await go('/admin/agents');
    await page.getByRole('link', { name: 'Sundae', exact: true }).click();
    await page.getByRole('link', { name: `Configure Access Settings of ${toolkit}` }).click();
    await page.getByRole('heading', { name: 'Configure Access Settings' }).waitFor();
  };
  const preview = () => page.locator('#preview');

  beforeAll(async () => {
    service = await startService();
    const lookup = await call('lookup_order', { order_id: 'SCP-1042' }, 'jane@acme.com');
    expect(lookup.status).toBe(200);
    janeLookup = lookup.id;
    expect((await call('process_refund', { order_id: 'SCP-1050' }, 'sam@thescoop.com')).status).toBe(200);
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400 && r.request().resourceType() !== 'document') problems.push(`${r.status()}: ${r.url()}`);
    });
    await go('/admin');
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  test('when an operator unchecks a member of Support and clicks Preview, then the page says Jane would lose it, and Save saves it', async () => {
    await go('/admin/toolkits');
    await page.getByRole('link', { name: 'Support', exact: true }).click();
    await page.getByRole('checkbox', { name: 'Check flavor stock', exact: true }).uncheck();
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('heading', { name: 'If you save this' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#preview');
    expect(await preview().textContent()).toContain('jane@acme.com would lose check_flavor_stock (1 run in the last 7 days).');
    // The form as it was sent, Save below the answer.
    expect(await page.getByRole('checkbox', { name: 'Check flavor stock', exact: true }).isChecked()).toBe(false);
    expect(await page.getByRole('checkbox', { name: 'Look up order', exact: true }).isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Toolkit Support saved' }).waitFor();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'Support', exact: true }) });
    expect(await row.getByText('Check flavor stock').count()).toBe(0);
  });

  test("when a deny rule is previewed on Sundae's Support, then Jane's lookup is shown refused, and its link opens that record", async () => {
    await configure('Support');
    const form = page.getByRole('form', { name: 'Add a rule' });
    await form.getByLabel('Kind').selectOption('deny');
    await form.getByLabel('Pattern').fill('*@acme.com');
    await form.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('heading', { name: 'If you save this' }).waitFor();
    const text = await preview().textContent();
    expect(text).toContain('jane@acme.com would lose lookup_order (1 run in the last 7 days).');
    expect(text).toContain('1 recorded call would be decided otherwise: 1 would be refused.');
    await shoot('preview');
    await preview()
      .getByRole('link', { name: `Call ${janeLookup}` })
      .click();
    await page.getByRole('heading', { name: 'Tool calls', level: 1 }).waitFor();
    const record = page.locator(`#call-${janeLookup}`);
    expect(await record.textContent()).toContain('lookup_order');
    expect(await record.textContent()).toContain('jane@acme.com');
    expect(await page.locator('tbody tr').first().getAttribute('id')).toBe(`call-${janeLookup}`);
  });

  test('when the previewed rule is then saved with Add rule, then it is the live rule', async () => {
    await configure('Support');
    const form = page.getByRole('form', { name: 'Add a rule' });
    await form.getByLabel('Kind').selectOption('deny');
    await form.getByLabel('Pattern').fill('*@acme.com');
    await form.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('heading', { name: 'If you save this' }).waitFor();
    expect(await form.getByLabel('Pattern').inputValue()).toBe('*@acme.com');
    await form.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('status').filter({ hasText: 'Rule added: deny *@acme.com' }).waitFor();
    expect(await page.getByRole('heading', { name: 'If you save this' }).count()).toBe(0);
  });

  test("when an access rule that changes no one is previewed on Sundae's page, then it says nothing would change, and nothing is saved", async () => {
    await go('/admin/agents');
    await page.getByRole('link', { name: 'Sundae', exact: true }).click();
    const form = page.getByRole('form', { name: 'Add an access rule' });
    await form.getByLabel('Access kind').selectOption('deny');
    await form.getByLabel('Access pattern').fill('*@acme.com');
    await form.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('heading', { name: 'If you save this' }).waitFor();
    expect(await preview().textContent()).toContain('Nothing would change');
    expect(await form.getByLabel('Access pattern').inputValue()).toBe('*@acme.com');
    await go('/admin/agents/1');
    expect(await page.getByRole('button', { name: /^Remove access rule/ }).count()).toBe(0);
  });

  test('when approval on Finance is previewed and then tried as candidate, then the candidate page shows it, and its shadow fills as calls come', async () => {
    await configure('Finance');
    const form = page.getByRole('form', { name: 'Approval' });
    await form.getByRole('checkbox', { name: 'Require approval' }).check();
    await form.getByLabel('Approvers').fill('mara@thescoop.com');
    await form.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('heading', { name: 'If you save this' }).waitFor();
    expect(await preview().textContent()).toContain('1 recorded call would be decided otherwise: 1 would wait for approval.');
    await form.getByRole('button', { name: 'Try as candidate' }).click();
    await page.getByRole('heading', { name: 'Candidate terms', level: 1 }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Candidate terms set' }).waitFor();
    expect(await page.getByText('Approval: on, approvers mara@thescoop.com').count()).toBe(1);

    const later = await call('process_refund', { order_id: 'SCP-1050' }, 'sam@thescoop.com');
    expect(later.status).toBe(200);
    await page.reload();
    const shadow = page.locator('section[aria-labelledby="shadow"]');
    expect(await shadow.textContent()).toMatch(/1 call would have been decided otherwise/);
    const row = shadow.getByRole('row').filter({ has: page.getByRole('link', { name: `Call ${later.id}` }) });
    expect(await row.textContent()).toContain('would wait for approval');
    await shoot('candidate');
  });

  test('when the candidate is promoted, then approval is live on Finance and the candidate is gone', async () => {
    await page.getByRole('button', { name: 'Promote to live terms' }).click();
    await page.getByRole('status').filter({ hasText: "Promoted: the candidate is Finance's live terms now." }).waitFor();
    expect(await page.getByText('On: approvers are mara@thescoop.com.').count()).toBe(1);
    expect(await page.getByRole('heading', { name: 'Candidate terms' }).count()).toBe(0);
  });

  test('when Allow on scheduled runs is tried as candidate and dropped, then the live switch stays off', async () => {
    const form = page.getByRole('form', { name: 'Scheduled runs' });
    await form.getByRole('checkbox', { name: 'Allow on scheduled runs' }).check();
    await form.getByRole('button', { name: 'Try as candidate' }).click();
    await page.getByRole('heading', { name: 'Candidate terms', level: 1 }).waitFor();
    expect(await page.getByText('Scheduled runs: allowed').count()).toBe(1);
    await page.getByRole('button', { name: 'Drop candidate' }).click();
    await page.getByRole('status').filter({ hasText: 'Candidate dropped: the live terms are as they were.' }).waitFor();
    expect(await page.getByRole('checkbox', { name: 'Allow on scheduled runs' }).isChecked()).toBe(false);
  });

  test("when Remove is clicked on Sundae's Support deny rule, then its preview shows Jane gaining lookup_order, Cancel keeps it, and Remove removes it", async () => {
    await configure('Support');
    const remove = () => page.getByRole('button', { name: 'Remove deny rule *@acme.com' }).click();
    await remove();
    await page.getByRole('heading', { name: 'Remove the deny rule *@acme.com?', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'If you remove it' }).waitFor();
    expect(await preview().textContent()).toContain('jane@acme.com would gain lookup_order (1 run in the last 7 days).');
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.getByRole('heading', { name: 'Configure Access Settings' }).waitFor();
    expect(await page.getByRole('button', { name: 'Remove deny rule *@acme.com' }).count()).toBe(1);
    await remove();
    await page.getByRole('heading', { name: 'If you remove it' }).waitFor();
    await page.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Rule removed.' }).waitFor();
    expect(await page.getByRole('button', { name: 'Remove deny rule *@acme.com' }).count()).toBe(0);
  });

  test("when Detach is clicked on Sundae's Finance, then its preview shows who would lose process_refund, and Cancel keeps it attached", async () => {
    await configure('Finance');
    await page.getByRole('button', { name: 'Detach Finance from Sundae' }).click();
    await page.getByRole('heading', { name: 'If you detach it' }).waitFor();
    expect(await preview().textContent()).toMatch(/would lose [^.]*process_refund/);
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.getByRole('heading', { name: 'Configure Access Settings' }).waitFor();
    expect(await page.getByRole('button', { name: 'Detach Finance from Sundae' }).count()).toBe(1);
  });

  test("when Remove is clicked on a cap of Sundae's Support, then its preview shows Jane's call over the cap running, and Remove removes it", async () => {
    await configure('Support');
    const add = page.getByRole('form', { name: 'Add a cap' });
    await add.getByLabel('Tool').selectOption('lookup_order');
    await add.getByLabel('Limit').fill('1');
    await add.getByLabel('Window').fill('1d');
    await add.getByRole('button', { name: 'Add cap' }).click();
    await page.getByRole('status').filter({ hasText: 'Cap added: at most 1 lookup_order calls per sender per 1d.' }).waitFor();
    // Jane's first look-up under the cap runs; her second is refused over it.
    await call('lookup_order', { order_id: 'SCP-1043' }, 'jane@acme.com');
    const over = await call('lookup_order', { order_id: 'SCP-1044' }, 'jane@acme.com');
    await page.getByRole('button', { name: 'Remove the cap of 1 per sender per 1d' }).click();
    await page.getByRole('heading', { name: 'Remove the cap of 1 lookup_order call per sender per 1d?', level: 1 }).waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('lookup_order would have no limit for Sundae');
    await page.getByRole('heading', { name: 'If you remove it' }).waitFor();
    const row = preview()
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: `Call ${over.id}` }) });
    expect(await row.textContent()).toContain('would run');
    await page.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Cap removed.' }).waitFor();
    expect(await page.getByRole('button', { name: 'Remove the cap of 1 per sender per 1d' }).count()).toBe(0);
  });

  test('then no page broke its CSP or logged an error', () => {
    expect(problems).toEqual([]);
  });
});
