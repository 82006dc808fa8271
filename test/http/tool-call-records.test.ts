// GET /agents/:id/tool-calls?status=: an agent's records of one status, newest first, the way the
// dashboard's Tool calls page shows refusals.
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;
let agent: number;

beforeAll(async () => {
  t = await createTestApp();
  const finance = await makeToolkit(t, 'Finance', ['process_refund']);
  agent = await makeAgent(t, { name: 'Sundae', toolkit_ids: [] });
  await t
    .admin()
    .post(`/api/agents/${agent}/toolkits`)
    .send({ toolkit_id: finance, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] })
    .expect(201);
  const refund = (sender: string) =>
    t
      .client()
      .post(`/api/agents/${agent}/tool-calls`)
      .send({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender });
  await refund('jane@acme.com').expect(403);
  await refund('mara@thescoop.com').expect(200);
  await refund('omar@example.org').expect(403);
});
afterAll(() => t.close());

test('when the records are asked for with status=denied, then only the refusals come back, newest first', async () => {
  const all = (await t.admin().get(`/api/agents/${agent}/tool-calls`).expect(200)).body as { status: string; routing_key: string }[];
  expect(all.map((r) => r.status)).toEqual(['denied', 'success', 'denied']);
  const denied = (await t.admin().get(`/api/agents/${agent}/tool-calls?status=denied`).expect(200)).body as { routing_key: string }[];
  expect(denied.map((r) => r.routing_key)).toEqual(['omar@example.org', 'jane@acme.com']);
});

test('when the status is not one a record can have, then it is a 422 naming the parameter', async () => {
  const res = await t.admin().get(`/api/agents/${agent}/tool-calls?status=refused`).expect(422);
  expect(res.body.detail[0].loc).toEqual(['query', 'status']);
});
