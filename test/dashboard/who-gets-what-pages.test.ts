// Who gets what picks its agent from a page of agents by name, as the agents list pages: the field
// offers one page, `More agents` reads the next after the last name shown, and a search narrows it
// to the names that begin with what the operator typed, so a page is one range of the name index.
import { createTestApp, type TestApp } from '../support/app';
import { signedIn } from './session';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ dashboard: true });
  await t.sequelize.query(`INSERT INTO agents (name) SELECT 'Kiosk ' || lpad(n::text, 3, '0') FROM generate_series(1, 230) AS n`);
  await t.sequelize.query(`INSERT INTO agents (name) VALUES ('Yeti Outpost'), ('yeti annex')`);
});
afterAll(() => t.close());

/** The agents the Agent field offers, as [id, name]. */
const offered = (html: string) => {
  const select = html.slice(html.indexOf('<select id="agent"'), html.indexOf('</select>', html.indexOf('<select id="agent"')));
  return [...select.matchAll(/<option value="(\d+)"[^>]*>([^<]*)<\/option>/g)].map((m) => [Number(m[1]), m[2]!] as const);
};
const moreLink = (html: string) => /<a href="([^"]+)" rel="next">More agents<\/a>/.exec(html)?.[1]?.replace(/&amp;/g, '&');

test('when More agents is followed from the first page, then every agent is offered exactly once, by name', async () => {
  const session = await signedIn(t.app);
  const [rows] = await t.sequelize.query('SELECT id FROM agents');
  const seen: (readonly [number, string])[] = [];
  let path: string | undefined = '/admin/who-gets-what';
  for (let pages = 0; path !== undefined && pages < 10; pages++) {
    const page = await session.get(path);
    expect(page.status).toBe(200);
    const field = offered(page.text);
    expect(field.length).toBeLessThanOrEqual(100);
    seen.push(...field);
    path = moreLink(page.text);
  }
  const ids = seen.map(([id]) => id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids.sort((a, b) => a - b)).toEqual((rows as { id: number }[]).map((r) => r.id).sort((a, b) => a - b));
  const names = seen.map(([, name]) => name.toLowerCase());
  expect(names).toEqual([...names].sort());
});

test('when an operator searches for the beginning of a name, then the field offers those agents alone, regardless of case, and the check keeps the search', async () => {
  const session = await signedIn(t.app);
  const page = await session.get('/admin/who-gets-what?agent_name=YETI');
  expect(offered(page.text).map(([, name]) => name)).toEqual(['yeti annex', 'Yeti Outpost']);
  expect(page.text).toContain('<input type="hidden" name="agent_name" value="YETI"/>');
  expect(moreLink(page.text)).toBeUndefined();
});

test('when the search finds no agent, then the page says so', async () => {
  const page = await (await signedIn(t.app)).get('/admin/who-gets-what?agent_name=Zz');
  expect(page.status).toBe(200);
  expect(offered(page.text)).toEqual([]);
  expect(page.text).toContain("No agent's name begins with &quot;Zz&quot;.");
});

test('when the agent asked for lies past the page, then it is offered and chosen, and the check answers for it', async () => {
  const [[last]] = (await t.sequelize.query(`SELECT id FROM agents WHERE name = 'Kiosk 230'`)) as [{ id: number }[], unknown];
  const page = await (await signedIn(t.app)).get(`/admin/who-gets-what?agent=${last!.id}&sender=jane%40acme.com`);
  expect(offered(page.text)[0]).toEqual([last!.id, 'Kiosk 230']);
  expect(page.text).toContain('A message from jane@acme.com to Kiosk 230');
});

test('when the page cursor is not one the field gave, then it is a 422 page, as on the Agents page', async () => {
  const page = await (await signedIn(t.app)).get('/admin/who-gets-what?agents_after=not-a-cursor');
  expect(page.status).toBe(422);
});
