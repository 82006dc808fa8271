// The agents list says who reaches each agent, from its access rules (SEMANTICS §9), so an
// operator sees it without opening every agent.
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent } from '../support/factories';
import { signedIn } from './session';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ dashboard: true });
});
afterAll(() => t.close());

/** The cells of an agent's row, as text. */
function rowCells(html: string, agentId: number): string[] {
  const start = html.indexOf(`<a href="/admin/agents/${agentId}">`);
  if (start < 0) throw new Error(`agent ${agentId} is not listed`);
  const row = html.slice(start, html.indexOf('</tr>', start));
  return [...row.matchAll(/<td[^>]*>([^]*?)<\/td>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim());
}

test('when the agents are listed, then each row says who reaches the agent: every sender, only the allowed, or all but the denied', async () => {
  const open = await makeAgent(t, { name: 'Open desk' });
  const staff = await makeAgent(t, { name: 'Staff desk' });
  await t.tg.accessRules.add(staff, { kind: 'allow', pattern: '*@TheScoop.com' });
  await t.tg.accessRules.add(staff, { kind: 'deny', pattern: 'intern@thescoop.com' });
  const blocked = await makeAgent(t, { name: 'Public desk' });
  await t.tg.accessRules.add(blocked, { kind: 'deny', pattern: '*@spam.example' });
  await t.tg.accessRules.add(blocked, { kind: 'deny', pattern: 'troll@acme.com' });

  const page = await (await signedIn(t.app)).get('/admin/agents');
  expect(page.status).toBe(200);
  expect(page.text).toContain('<th scope="col">Who reaches it</th>');
  expect(rowCells(page.text, open)[0]).toBe('Every sender (no access rules)');
  expect(rowCells(page.text, staff)[0]).toBe('Only *@thescoop.com, except intern@thescoop.com');
  expect(rowCells(page.text, blocked)[0]).toBe('All but *@spam.example, troll@acme.com');
});
