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

describe('when there are more agents than a page shows', () => {
  beforeAll(async () => {
    await t.sequelize.query(`INSERT INTO agents (name) SELECT 'Kiosk ' || lpad(n::text, 3, '0') FROM generate_series(1, 120) AS n`);
    await t.sequelize.query(`INSERT INTO agents (name) VALUES ('Yeti Outpost')`);
  });

  const listed = (html: string) => [...html.matchAll(/<a href="\/admin\/agents\/(\d+)">/g)].map((m) => Number(m[1]));

  test('then following Next page from the first page lists every agent exactly once', async () => {
    const session = await signedIn(t.app);
    const [rows] = await t.sequelize.query('SELECT id FROM agents');
    const seen: number[] = [];
    let path: string | null = '/admin/agents';
    while (path !== null) {
      const page = await session.get(path);
      expect(page.status).toBe(200);
      seen.push(...listed(page.text));
      const next = /<a href="([^"]+)" rel="next">/.exec(page.text);
      path = next ? next[1]!.replace(/&amp;/g, '&') : null;
    }
    expect(seen.length).toBe(rows.length);
    expect(new Set(seen).size).toBe(rows.length);
  });

  test('then a search by the beginning of a name lists that one agent, without a Next page', async () => {
    const page = await (await signedIn(t.app)).get('/admin/agents?name=yeti');
    expect(page.status).toBe(200);
    expect(listed(page.text)).toHaveLength(1);
    expect(page.text).toContain('Yeti Outpost');
    expect(page.text).not.toContain('rel="next"');
  });

  test('then a cursor the list did not give is a 422 page, not a list', async () => {
    const page = await (await signedIn(t.app)).get('/admin/agents?after=forged');
    expect(page.status).toBe(422);
    expect(listed(page.text)).toEqual([]);
  });
});
