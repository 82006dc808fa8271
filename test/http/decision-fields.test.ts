// Every tool-call record names the policy version it was decided under, and a refusal its stable
// reason (SEMANTICS §16): GET /agents/:id/tool-calls shows both, as the records hold them.
import { QueryTypes } from 'sequelize';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;
let refunds: number;
beforeAll(async () => {
  t = await createTestApp();
  refunds = await makeToolkit(t, 'Refunds', ['process_refund', 'lookup_order']);
});
afterAll(() => t.close());

interface Listed {
  id: number;
  tool_id: string;
  status: string;
  reason: string | null;
  policy_version: number | null;
}

async function newest(agent: number): Promise<Listed> {
  const records = (await t.admin().get(`/api/agents/${agent}/tool-calls?limit=1`).expect(200)).body as Listed[];
  return records[0]!;
}

async function policyVersion(agent: number): Promise<number> {
  const [row] = await t.sequelize.query<{ version: string }>('SELECT toolgate_policy_version(:agent) AS version', {
    replacements: { agent },
    type: QueryTypes.SELECT,
  });
  return Number(row!.version);
}

/** An agent holding Refunds for senders at thescoop.com, with the attachment's extra terms. */
async function sundae(terms: Record<string, unknown> = {}): Promise<number> {
  const agent = await makeAgent(t, { name: `Sundae ${Math.random().toString(36).slice(2, 8)}`, toolkit_ids: [] });
  await t
    .admin()
    .post(`/api/agents/${agent}/toolkits`)
    .send({ toolkit_id: refunds, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }], ...terms })
    .expect(201);
  return agent;
}

const dispatch = (agent: number, sender: string, tool = 'process_refund') =>
  t
    .client()
    .post(`/api/agents/${agent}/tool-calls`)
    .send({ tool, input: { order_id: 'SCP-1042' }, sender });

test('when a tool the run was not offered is called, then its denied record gives the reason not_offered', async () => {
  const agent = await sundae();
  await dispatch(agent, 'jane@acme.com').expect(403);
  expect(await newest(agent)).toMatchObject({ tool_id: 'process_refund', status: 'denied', reason: 'not_offered' });
});

test('when a tool no attachment carries is called, then its denied record gives the reason not_offered', async () => {
  const agent = await sundae();
  await dispatch(agent, 'mara@thescoop.com', 'send_email').expect(403);
  expect(await newest(agent)).toMatchObject({ tool_id: 'send_email', status: 'denied', reason: 'not_offered' });
});

test("when the agent's access rules refuse the sender, then the denied record gives the reason access_rules", async () => {
  const agent = await sundae();
  await t.admin().post(`/api/agents/${agent}/access-rules`).send({ kind: 'deny', pattern: 'omar@thescoop.com' }).expect(201);
  const res = await dispatch(agent, 'omar@thescoop.com').expect(403);
  expect(res.body.code).toBe('sender_forbidden');
  expect(await newest(agent)).toMatchObject({ status: 'denied', reason: 'access_rules' });
});

test('when a call is over its cap, then the denied record gives the reason cap_exceeded', async () => {
  const agent = await sundae({ caps: [{ tool_id: 'process_refund', per: 'sender', limit: 1, window: '1h' }] });
  await dispatch(agent, 'mara@thescoop.com').expect(200);
  const res = await dispatch(agent, 'mara@thescoop.com').expect(403);
  expect(res.body.code).toBe('cap_exceeded');
  expect(await newest(agent)).toMatchObject({ status: 'denied', reason: 'cap_exceeded' });
});

test('when a route runs at once a tool the sender may only request, then the denied record gives the reason needs_approval', async () => {
  const analysis = await makeToolkit(t, `Analysis ${Math.random().toString(36).slice(2, 8)}`, ['email_analyzer']);
  const agent = await makeAgent(t, { name: `Sundae ${Math.random().toString(36).slice(2, 8)}`, toolkit_ids: [] });
  await t
    .admin()
    .post(`/api/agents/${agent}/toolkits`)
    .send({ toolkit_id: analysis, approval: { approvers: ['*@thescoop.com'] } })
    .expect(201);
  const res = await t
    .client()
    .post(`/api/agents/${agent}/email/analyze`)
    .send({ from: 'jane@acme.com', body: 'Refund, please.' })
    .expect(403);
  expect(res.body.code).toBe('approval_required');
  expect(await newest(agent)).toMatchObject({ tool_id: 'email_analyzer', status: 'denied', reason: 'needs_approval' });
});

test('when a call runs, then its record has no reason and names the policy version it was decided under', async () => {
  const agent = await sundae();
  await dispatch(agent, 'mara@thescoop.com').expect(200);
  expect(await newest(agent)).toMatchObject({ status: 'success', reason: null, policy_version: await policyVersion(agent) });
});

test('when the policy changes between two calls, then each record names the version its own decision used', async () => {
  const agent = await sundae();
  await dispatch(agent, 'mara@thescoop.com').expect(200);
  const first = await newest(agent);
  expect(first.policy_version).toBe(await policyVersion(agent));
  // A deny rule on the attachment: the next call is refused under the new version.
  const [attachment] = (await t.admin().get(`/api/agents/${agent}/toolkits`).expect(200)).body as { id: number }[];
  await t
    .admin()
    .post(`/api/agents/${agent}/toolkits/${attachment!.id}/rules`)
    .send({ kind: 'deny', pattern: 'mara@thescoop.com' })
    .expect(201);
  await dispatch(agent, 'mara@thescoop.com').expect(403);
  const second = await newest(agent);
  expect(second).toMatchObject({ status: 'denied', reason: 'not_offered', policy_version: await policyVersion(agent) });
  expect(second.policy_version).toBeGreaterThan(first.policy_version!);
});
