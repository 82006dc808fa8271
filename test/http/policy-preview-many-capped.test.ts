// A preview whose cap counts more calls than it holds in memory at once (SEMANTICS §15): those calls
// come a page at a time, and each is still counted in time order, as when they are few.
import { QueryTypes } from 'sequelize';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

jest.setTimeout(120_000);

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(() => t.close());

/** `n` refunds of one sender, a second apart, the last a minute ago; their ids in time order. */
async function refunds(agentId: number, sender: string, n: number): Promise<number[]> {
  const rows = await t.sequelize.query<{ id: string }>(
    `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, dispatch, run_key, created_at)
     SELECT :agentId, 'process_refund', 'process_refund', 'success', 'sender', :sender, 1, 'call', gen_random_uuid(),
            now() - interval '1 minute' - (:n - i) * interval '1 second'
       FROM generate_series(1, :n) AS i
     RETURNING id`,
    { replacements: { agentId, sender, n }, type: QueryTypes.SELECT },
  );
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

test('when a cap counts more calls than a preview holds at once, then each beyond the first of the day is counted over the cap, in time order', async () => {
  const finance = await makeToolkit(t, 'Finance (many refunds)', ['process_refund']);
  const agentId = await makeAgent(t, { name: 'Sundae (many refunds)' });
  const attachment = (await t.admin().post(`/api/agents/${agentId}/toolkits`).send({ toolkit_id: finance }).expect(201)).body.id as number;
  const ids = await refunds(agentId, 'mara@thescoop.com', 60_000);

  const impact = (
    await t
      .admin()
      .post('/api/policy/preview')
      .send({ change: { update: { attachment_id: attachment, caps: [{ per: 'sender', limit: 1, window: '1d' }] } } })
      .expect(200)
  ).body;

  expect(impact.calls_examined).toBe(60_000);
  expect(impact.calls.counts).toEqual({ refused: 0, admitted: 0, pending_approval: 0, cap_exceeded: 59_999 });
  expect(impact.calls.changed.map((c: { call_id: number }) => c.call_id)).toEqual(ids.slice(1, 101));
  expect(impact.truncated).toBe(true);
});
