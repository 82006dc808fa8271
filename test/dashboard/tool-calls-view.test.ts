// The Tool calls page shows each record's sender as stored. Rows written before routing keys refused
// invisible characters (SEMANTICS §3) may hold a right-to-left override: the page must show it as a
// visible escape, so `\u202emoc.poocseht@aram` never reads as mara@thescoop.com.
import { h } from 'preact';
import { renderToStaticMarkup } from 'preact-render-to-string';
import { QueryTypes } from 'sequelize';
import { ToolCallsPage } from '../../src/app/dashboard/views/tool-calls';
import { pageToolCalls } from '../../src/services/tool-calls';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent } from '../support/factories';

let t: TestApp;
let agent: number;

beforeAll(async () => {
  t = await createTestApp();
  agent = await makeAgent(t, { name: 'Sundae', toolkit_ids: [] });
  // An older row, as a version that kept bidirectional controls in keys wrote it.
  await t.sequelize.query(
    `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, error, approved_by, created_at)
     VALUES (:agent, 'process_refund', 'process_refund', 'success', 'sender', :key, 3, NULL, :key, NOW())`,
    { replacements: { agent, key: '\u202emoc.poocseht@aram' }, type: QueryTypes.INSERT },
  );
});
afterAll(() => t.close());

async function page(): Promise<string> {
  const calls = (await pageToolCalls(t.sequelize, agent, { limit: 100 })).calls;
  const agents = [{ id: agent, name: 'Sundae' }] as Parameters<typeof ToolCallsPage>[0]['agents'];
  return renderToStaticMarkup(
    h(ToolCallsPage, { ctx: { base: '/admin', csrfToken: 'x' }, agents, agentId: agent, status: '', calls, limit: 100 }),
  );
}

test('when a stored sender holds a right-to-left override, then the Tool calls page shows it escaped, never the control itself', async () => {
  const html = await page();
  expect(html).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/u);
  expect(html).toContain('U+202E');
  expect(html).toContain('moc.poocseht@aram');
});

test('when a record is a refusal, then the Tool calls page shows its reason and the policy version it was decided under', async () => {
  await t.sequelize.query(
    `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, error, policy_version, reason)
     VALUES (:agent, 'process_refund', 'process_refund', 'denied', 'sender', 'jane@acme.com', 0, 'Not offered', 41, 'not_offered')`,
    { replacements: { agent }, type: QueryTypes.INSERT },
  );
  const html = await page();
  expect(html).toContain('not offered (no attachment admitting the run carries it)');
  expect(html).toContain('<td>41</td>');
});
