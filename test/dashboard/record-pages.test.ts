// The dashboard's Tool calls and Approvals pages a page at a time (Older records, Older requests),
// and the Agent field of the pages of one agent's records, which offers the first agents by name
// and the one a link asks for.
import { recordToolCall } from '../../src/services/tool-calls';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent } from '../support/factories';
import { signedIn } from './session';

let t: TestApp;
let agent: number;
let last: number;

beforeAll(async () => {
  t = await createTestApp({ dashboard: true });
  agent = await makeAgent(t, { name: 'Aardvark desk', toolkit_ids: [] });
  for (let n = 0; n < 230; n++)
    await recordToolCall(t.sequelize, {
      agent_id: agent,
      tool_id: 'process_refund',
      tool_name: 'process_refund',
      status: 'denied',
      run: 'sender',
      routing_key: `sender${n}@acme.com`,
      duration_ms: 0,
      error: null,
    });
  // More agents than the Agent field offers (100), all sorting before the last one.
  await t.sequelize.query(`INSERT INTO agents (name) SELECT 'Kiosk ' || lpad(n::text, 3, '0') FROM generate_series(1, 120) AS n`);
  last = await makeAgent(t, { name: 'Zz last desk', toolkit_ids: [] });
  await t.sequelize.query(
    `INSERT INTO approval_requests (agent_id, code, attachment_id, tool_id, input, input_digest, scope, status, run, routing_key, expires_at)
     SELECT :agent, 'AB' || lpad(n::text, 5, '0') || '1', 1, 'process_refund', '{}', md5(n::text), 'asker' || n || '@acme.com', 'denied', 'sender', 'asker' || n || '@acme.com', now()
       FROM generate_series(0, 129) AS n ORDER BY n`,
    { replacements: { agent } },
  );
});
afterAll(() => t.close());

const senders = (html: string) => [...html.matchAll(/(sender\d+)@acme\.com/g)].map((m) => m[1]!);

test('when Older records is followed to the end, then every record is shown exactly once, newest first', async () => {
  const session = await signedIn(t.app);
  const seen: string[] = [];
  let path: string | null = `/admin/tool-calls?agent=${agent}`;
  while (path !== null) {
    const page = await session.get(path);
    expect(page.status).toBe(200);
    seen.push(...senders(page.text));
    const next = /<a href="([^"]+)" rel="next">/.exec(page.text);
    path = next ? next[1]!.replace(/&amp;/g, '&') : null;
  }
  expect(seen).toEqual(Array.from({ length: 230 }, (_, i) => `sender${229 - i}`));
});

test('when the agent asked for sorts past the first agents by name, then the Agent field offers it, chosen, and its records show', async () => {
  const page = await (await signedIn(t.app)).get(`/admin/tool-calls?agent=${last}`);
  expect(page.status).toBe(200);
  expect(page.text).toMatch(new RegExp(`<option value="${last}" selected`));
  expect(page.text).toContain('Zz last desk: 0 records');
});

test('when the Tool calls cursor is forged, then the page is a 422, not a list of records', async () => {
  const page = await (await signedIn(t.app)).get(`/admin/tool-calls?agent=${agent}&after=forged`);
  expect(page.status).toBe(422);
  expect(senders(page.text)).toEqual([]);
});

test('when Older requests is followed to the end, then every approval request is shown exactly once, newest first', async () => {
  const session = await signedIn(t.app);
  const seen: string[] = [];
  let path: string | null = `/admin/approvals?agent=${agent}&status=`;
  while (path !== null) {
    const page = await session.get(path);
    expect(page.status).toBe(200);
    seen.push(...new Set([...page.text.matchAll(/(asker\d+)@acme\.com/g)].map((m) => m[1]!)));
    const next = /<a href="([^"]+)" rel="next">/.exec(page.text);
    path = next ? next[1]!.replace(/&amp;/g, '&') : null;
  }
  expect(seen).toEqual(Array.from({ length: 130 }, (_, i) => `asker${129 - i}`));
});
