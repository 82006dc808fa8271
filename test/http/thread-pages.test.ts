// GET /agents/:id/threads a page at a time (docs/HTTP.md, "Pages"): newest activity first, then the
// newest thread, after an opaque cursor; the way on is in the Toolgate-Next-Cursor and Link headers.
import type { Response } from 'supertest';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent } from '../support/factories';

let t: TestApp;
let agent: number;

interface Listed {
  id: string;
  updated_at: string;
}

beforeAll(async () => {
  t = await createTestApp();
  agent = await makeAgent(t, { name: 'Thread keeper', toolkit_ids: [] });
  // 120 threads, several sharing one moment of activity, so a page boundary falls inside a tie.
  await t.sequelize.query(
    `INSERT INTO threads (agent_id, subject, reference, updated_at)
     SELECT :agent, 'Subject ' || n, 'thr_seed_' || n, timestamptz '2026-11-01' + (n / 3) * interval '1 minute'
       FROM generate_series(1, 120) AS n`,
    { replacements: { agent } },
  );
});
afterAll(() => t.close());

const nextOf = (res: Response): string | undefined => res.headers['toolgate-next-cursor'] as string | undefined;

async function addThread(n: number): Promise<void> {
  await t.sequelize.query(`INSERT INTO threads (agent_id, subject, reference) VALUES (:agent, 'New', :reference)`, {
    replacements: { agent, reference: `thr_new_${n}_${Date.now()}` },
  });
}

test('when every page is read in turn while new threads arrive between reads, then each thread there at the start is listed exactly once, newest activity first', async () => {
  const [rows] = await t.sequelize.query('SELECT reference FROM threads WHERE agent_id = :agent', { replacements: { agent } });
  const before = (rows as { reference: string }[]).map((r) => r.reference);
  const seen: Listed[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const res = await t
      .admin()
      .get(`/api/agents/${agent}/threads`)
      .query({ limit: 7, ...(after ? { after } : {}) })
      .expect(200);
    seen.push(...(res.body as Listed[]));
    await addThread(pages);
    after = nextOf(res);
    if (after === undefined) break;
  }
  const ids = seen.map((s) => s.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(before.every((id) => ids.includes(id))).toBe(true);
  const times = seen.map((s) => Date.parse(s.updated_at));
  expect(times).toEqual([...times].sort((a, b) => b - a));
});

test('when a thread below the page read gets new activity, then it moves to the top: the walk does not show it twice', async () => {
  const first = await t.admin().get(`/api/agents/${agent}/threads?limit=5`).expect(200);
  const moved = 'thr_seed_1';
  await t.sequelize.query(`UPDATE threads SET updated_at = now() WHERE reference = :moved`, { replacements: { moved } });
  const seen = (first.body as Listed[]).map((s) => s.id);
  let after = nextOf(first);
  while (after !== undefined) {
    const res = await t.admin().get(`/api/agents/${agent}/threads`).query({ limit: 50, after }).expect(200);
    seen.push(...(res.body as Listed[]).map((s) => s.id));
    after = nextOf(res);
  }
  expect(new Set(seen).size).toBe(seen.length);
  const top = await t.admin().get(`/api/agents/${agent}/threads?limit=1`).expect(200);
  expect(top.body[0].id).toBe(moved);
});

test('when more threads follow a page, then Link names the next page with the same limit, and the last page has neither header', async () => {
  const first = await t.admin().get(`/api/agents/${agent}/threads?limit=2`).expect(200);
  const cursor = nextOf(first)!;
  expect(first.headers.link).toBe(`</api/agents/${agent}/threads?limit=2&after=${cursor}>; rel="next"`);
  const all = await t.admin().get(`/api/agents/${agent}/threads?limit=500`).expect(200);
  expect(all.headers['toolgate-next-cursor']).toBeUndefined();
  expect(all.headers.link).toBeUndefined();
});

test.each([
  ['text that is no cursor', 'not-a-cursor!'],
  ["an agents list's cursor", Buffer.from('["desk",4]').toString('base64url')],
])('when the cursor is %s, then it is a 422 invalid_cursor naming after', async (_what, after) => {
  const res = await t.admin().get(`/api/agents/${agent}/threads`).query({ after }).expect(422);
  expect(res.body.code).toBe('validation_error');
  expect(res.body.detail[0]).toMatchObject({ loc: ['query', 'after'], type: 'invalid_cursor' });
});

test('when a page is read, then the database reads it as one range of the activity index, with no sort of the threads', async () => {
  await t.sequelize.query('ANALYZE threads');
  // Planner settings for this one transaction: with few rows a scan of the table would be cheaper.
  const plan = await t.sequelize.transaction(async (transaction) => {
    await t.sequelize.query('SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off', { transaction });
    const [rows] = await t.sequelize.query(
      `EXPLAIN SELECT id FROM threads WHERE agent_id = :agent AND (updated_at, id) < (now(), 1000) ORDER BY updated_at DESC, id DESC LIMIT 8`,
      { replacements: { agent }, transaction },
    );
    return (rows as Record<string, string>[]).map((r) => Object.values(r)[0]).join('\n');
  });
  expect(plan).toMatch(/Index (Only )?Scan using threads_agent_activity_idx/);
  expect(plan).not.toContain('Sort');
});
