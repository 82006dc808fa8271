// GET /agents/:id/approval-requests a page at a time (docs/HTTP.md, "Pages"): newest first, each
// page after the cursor the previous one gave, with or without a status.
import type { Response } from 'supertest';
import { createTestApp, type TestApp } from '../support/app';
import { createSundae, type Sundae } from '../support/scoop';

let t: TestApp;
let sundae: Sundae;

const file = (status: 'denied' | 'expired', n: number) =>
  t.sequelize.query(
    `INSERT INTO approval_requests (agent_id, code, attachment_id, tool_id, input, input_digest, scope, status, run, routing_key, expires_at)
     VALUES (:agent, 'AB' || lpad(:n::text, 5, '0') || '1', :attachment, 'process_refund', '{}', md5(:n::text), 'jane@acme.com', :status, 'sender', 'jane@acme.com', now())`,
    { replacements: { agent: sundae.id, attachment: sundae.finance, status, n } },
  );

beforeAll(async () => {
  t = await createTestApp();
  sundae = await createSundae(t, 'approval');
  for (let n = 0; n < 45; n++) await file(n % 3 === 0 ? 'expired' : 'denied', n);
});
afterAll(() => t.close());

const nextOf = (res: Response) => res.headers['toolgate-next-cursor'] as string | undefined;

async function idsOf(status?: string): Promise<number[]> {
  const [rows] = await t.sequelize.query(
    `SELECT id FROM approval_requests WHERE agent_id = ${sundae.id} ${status ? `AND status = '${status}'` : ''} ORDER BY id DESC`,
  );
  return (rows as { id: number }[]).map((r) => r.id);
}

async function walk(query: Record<string, string | number>, between: () => Promise<unknown>): Promise<number[]> {
  const ids: number[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const res = await t
      .admin()
      .get(`/api/agents/${sundae.id}/approval-requests`)
      .query({ ...query, ...(after ? { after } : {}) })
      .expect(200);
    ids.push(...(res.body as { id: number }[]).map((r) => r.id));
    await between();
    after = nextOf(res);
    if (after === undefined) break;
  }
  return ids;
}

test('when every page is read in turn while requests are filed between reads, then each request there at the start comes exactly once, newest first', async () => {
  const before = await idsOf();
  let n = 1000;
  expect(await walk({ limit: 10 }, () => file('denied', n++))).toEqual(before);
});

test('when the pages keep one status, then they walk that status only, every request once', async () => {
  const expired = await idsOf('expired');
  expect(await walk({ limit: 4, status: 'expired' }, async () => undefined)).toEqual(expired);
});

test('when the cursor is not one these requests gave, then it is a 422 validation_error naming after', async () => {
  const res = await t.admin().get(`/api/agents/${sundae.id}/approval-requests?after=nope!`).expect(422);
  expect(res.body.detail[0]).toEqual(expect.objectContaining({ loc: ['query', 'after'], type: 'invalid_cursor' }));
});
