// GET /agents/:id/tool-calls a page at a time (docs/HTTP.md, "Pages"): newest first, each page
// after the cursor the previous one gave, with or without a status.
import type { Response } from 'supertest';
import { recordToolCall } from '../../src/services/tool-calls';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent } from '../support/factories';

let t: TestApp;
let agent: number;

const record = (status: 'denied' | 'skipped', n: number) =>
  recordToolCall(t.sequelize, {
    agent_id: agent,
    tool_id: 'process_refund',
    tool_name: 'process_refund',
    status,
    run: 'sender',
    routing_key: `sender${n}@acme.com`,
    duration_ms: 0,
    error: null,
  });

beforeAll(async () => {
  t = await createTestApp();
  agent = await makeAgent(t, { name: 'Sundae', toolkit_ids: [] });
  for (let n = 0; n < 75; n++) await record(n % 3 === 0 ? 'denied' : 'skipped', n);
});
afterAll(() => t.close());

const nextOf = (res: Response) => res.headers['toolgate-next-cursor'] as string | undefined;

async function walk(query: Record<string, string | number>, between: () => Promise<unknown>): Promise<number[]> {
  const ids: number[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const res = await t
      .admin()
      .get(`/api/agents/${agent}/tool-calls`)
      .query({ ...query, ...(after ? { after } : {}) })
      .expect(200);
    ids.push(...(res.body as { id: number }[]).map((r) => r.id));
    await between();
    after = nextOf(res);
    if (after === undefined) break;
  }
  return ids;
}

test('when every page is read in turn while records are written between reads, then each record there at the start comes exactly once, newest first', async () => {
  const [rows] = await t.sequelize.query(`SELECT id FROM tool_calls WHERE agent_id = ${agent} ORDER BY id DESC`);
  const before = (rows as { id: string }[]).map((r) => Number(r.id));
  let n = 1000;
  const ids = await walk({ limit: 10 }, () => record('skipped', n++));
  expect(ids).toEqual(before);
});

test('when the pages keep one status, then they walk that status only, every record once', async () => {
  const [rows] = await t.sequelize.query(`SELECT id FROM tool_calls WHERE agent_id = ${agent} AND status = 'denied' ORDER BY id DESC`);
  const ids = await walk({ limit: 7, status: 'denied' }, async () => undefined);
  expect(ids).toEqual((rows as { id: string }[]).map((r) => Number(r.id)));
});

test('when older records follow a page, then Link names the next page with the same status and limit', async () => {
  const res = await t.admin().get(`/api/agents/${agent}/tool-calls?limit=5&status=denied`).expect(200);
  expect(res.headers.link).toBe(`</api/agents/${agent}/tool-calls?limit=5&status=denied&after=${nextOf(res)}>; rel="next"`);
});

test.each([
  ['text that is no cursor', '%%%'],
  ['an agents-list cursor', Buffer.from('["sundae",1]').toString('base64url')],
  ['a negative id', Buffer.from('[-4]').toString('base64url')],
])('when the cursor is %s, then it is a 422 validation_error naming after', async (_what, after) => {
  const res = await t.admin().get(`/api/agents/${agent}/tool-calls`).query({ after }).expect(422);
  expect(res.body.code).toBe('validation_error');
  expect(res.body.detail[0]).toEqual(expect.objectContaining({ loc: ['query', 'after'], type: 'invalid_cursor' }));
});
