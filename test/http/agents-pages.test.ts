// GET /agents a page at a time (docs/HTTP.md, "Pages"): by name, then id, after an opaque cursor,
// with a search by the beginning of a name. The body is the array it always was; the way on is in
// the Toolgate-Next-Cursor and Link headers.
import type { Response } from 'supertest';
import { createTestApp, type TestApp } from '../support/app';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
  await t.sequelize.query(`INSERT INTO agents (name) SELECT 'Desk ' || lpad(n::text, 4, '0') FROM generate_series(1, 230) AS n`);
  await t.sequelize.query(`INSERT INTO agents (name) VALUES ('Zebra helpdesk'), ('100% Sure'), ('100x Sure'), ('desk 0007')`);
});
afterAll(() => t.close());

interface Listed {
  id: number;
  name: string;
}

async function allIds(): Promise<number[]> {
  const [rows] = await t.sequelize.query('SELECT id FROM agents ORDER BY id');
  return (rows as { id: number }[]).map((r) => r.id);
}

function nextOf(res: Response): string | undefined {
  return res.headers['toolgate-next-cursor'] as string | undefined;
}

test('when every page is read in turn while agents are added between reads, then each agent there at the start is listed exactly once, by name then id', async () => {
  const before = await allIds();
  const seen: Listed[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const res = await t
      .admin()
      .get('/api/agents')
      .query({ limit: 40, ...(after ? { after } : {}) })
      .expect(200);
    seen.push(...(res.body as Listed[]));
    await t.sequelize.query(`INSERT INTO agents (name) VALUES ('AAA added ${pages}'), ('Desk 0100 added ${pages}')`);
    after = nextOf(res);
    if (after === undefined) break;
  }
  const ids = seen.map((a) => a.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(before.every((id) => ids.includes(id))).toBe(true);
  const keys = seen.map((a) => [a.name.toLowerCase(), a.id] as const);
  const sorted = [...keys].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] - y[1]));
  expect(keys).toEqual(sorted);
});

test('when more agents follow a page, then Link names the next page with the same query, and the last page has neither header', async () => {
  const first = await t.admin().get('/api/agents?limit=2&name=desk').expect(200);
  const cursor = nextOf(first)!;
  expect(first.headers.link).toBe(`</api/agents?limit=2&name=desk&after=${cursor}>; rel="next"`);
  const last = await t.admin().get('/api/agents?name=zebra').expect(200);
  expect(last.headers['toolgate-next-cursor']).toBeUndefined();
  expect(last.headers.link).toBeUndefined();
});

test('when the name searched is the beginning of one agent name among many, then that agent alone is listed, regardless of case', async () => {
  const res = await t.admin().get('/api/agents?name=ZEB').expect(200);
  expect((res.body as Listed[]).map((a) => a.name)).toEqual(['Zebra helpdesk']);
});

test('when the name searched holds % or _, then they are read as themselves, not as wildcards', async () => {
  const res = await t.admin().get('/api/agents').query({ name: '100%' }).expect(200);
  expect((res.body as Listed[]).map((a) => a.name)).toEqual(['100% Sure']);
});

test('when two agents have the same name but for case, then a page boundary between them loses neither', async () => {
  const one = await t.admin().get('/api/agents?name=desk 0007&limit=1').expect(200);
  const two = await t
    .admin()
    .get('/api/agents')
    .query({ name: 'desk 0007', limit: 1, after: nextOf(one) })
    .expect(200);
  expect([...one.body, ...two.body].map((a: Listed) => a.name).sort()).toEqual(['Desk 0007', 'desk 0007']);
});

test.each([['0'], ['1001'], ['ten']])('when the limit is %s, then it is a 422 naming the limit', async (limit) => {
  const res = await t.admin().get(`/api/agents?limit=${limit}`).expect(422);
  expect(res.body.code).toBe('validation_error');
  expect(res.body.detail[0].loc).toEqual(['query', 'limit']);
});

test.each([
  ['text that is no cursor', 'not-a-cursor!'],
  ['a cursor of another shape', Buffer.from('[7]').toString('base64url')],
  ['a cursor with a name where the id goes', Buffer.from('["a","b"]').toString('base64url')],
  ['a cursor past the length bound', 'A'.repeat(3000)],
])('when the cursor is %s, then it is a 422 validation_error naming after', async (_what, after) => {
  const res = await t.admin().get('/api/agents').query({ after }).expect(422);
  expect(res.body.code).toBe('validation_error');
  expect(res.body.detail[0].loc).toEqual(['query', 'after']);
});

test('when a query parameter the list does not know is sent, then it is a 422 that names it', async () => {
  const res = await t.admin().get('/api/agents?page=2').expect(422);
  expect(res.body.detail[0]).toEqual(expect.objectContaining({ loc: ['query'], type: 'unrecognized_keys' }));
  expect(res.body.detail[0].msg).toContain('page');
});
