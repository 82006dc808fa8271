// The dashboard's approvals (SEMANTICS §12) over HTTP: the page lists a pending request with its
// exact input, Approve runs it once and says so, a second Approve says it is already decided and
// runs nothing, and Configure Access Settings sets the approvers (a refused pattern says why).
import { QueryTypes } from 'sequelize';
import { createTestApp, type TestApp } from '../support/app';
import { createSundae, type Sundae } from '../support/scoop';
import { signedIn, type Visitor } from './session';

let t: TestApp;
let v: Visitor;
let sundae: Sundae;
let request: number;

beforeAll(async () => {
  t = await createTestApp({ dashboard: true });
  await t.sequelize.query("DELETE FROM scoop_refunds; UPDATE scoop_orders SET status = 'delivered' WHERE id = 'SCP-1042'");
  sundae = await createSundae(t, 'approval');
  const jane = await t
    .client()
    .post(`/api/agents/${sundae.id}/messages`)
    .send({ message: { from: 'jane@acme.com', body: 'Order SCP-1042 arrived melted. I would like a refund.' } })
    .expect(200);
  request = jane.body.steps.find((s: { tool: string }) => s.tool === 'process_refund').approval_request_id;
  v = await signedIn(t.app);
});
afterAll(() => t.close());

const refunds = async () => await t.sequelize.query('SELECT order_id, approved_by FROM scoop_refunds', { type: QueryTypes.SELECT });

test('when an operator opens Approvals, then the pending request is listed with its tool, its exact input and who asked', async () => {
  const page = await v.get(`/admin/approvals?agent=${sundae.id}`);
  expect(page.status).toBe(200);
  expect(page.text).toContain(`Request ${request}`);
  expect(page.text).toContain('process_refund');
  expect(page.text).toContain('&quot;order_id&quot;: &quot;SCP-1042&quot;');
  expect(page.text).toContain('jane@acme.com');
  expect(page.text).toContain(`aria-label="Approve request ${request}"`);
});

test('when the operator approves it, then it runs once, the page says so, and a second approval runs nothing', async () => {
  const path = `/admin/approvals/${sundae.id}/${request}/approve`;
  const approved = await v.post(path, { _csrf: await v.token(`/admin/approvals?agent=${sundae.id}`) });
  expect(approved.status).toBe(303);
  expect(await refunds()).toEqual([{ order_id: 'SCP-1042', approved_by: 'dashboard' }]);
  const after = await v.get(approved.headers.location!);
  expect(after.text).toContain(`Request ${request} approved: process_refund ran once.`);
  const again = await v.post(path, { _csrf: await v.token(`/admin/approvals?agent=${sundae.id}`) });
  expect(again.status).toBe(303);
  expect((await v.get(again.headers.location!)).text).toContain(`Approval request ${request} is approved`);
  expect(await refunds()).toHaveLength(1);
  const decided = (await t.admin().get(`/api/agents/${sundae.id}/approval-requests/${request}`).expect(200)).body;
  expect(decided.decided_by).toEqual({ via: 'dashboard', routing_key: null });
});

test('when an operator sets the approvers on Configure Access Settings, then they are saved normalized, and a bad pattern is refused beside the field', async () => {
  const path = `/admin/agents/${sundae.id}/toolkits/${sundae.finance}`;
  const saved = await v.post(`${path}/approval`, {
    _csrf: await v.token(path),
    require_approval: 'on',
    approval: 'Mara@TheScoop.com\n*@thescoop.com',
  });
  expect(saved.status).toBe(303);
  expect((await v.get(saved.headers.location!)).text).toContain('Requests pending under the old terms are void.');
  // The same terms again change nothing, and the page does not say they voided anything.
  const same = await v.post(`${path}/approval`, {
    _csrf: await v.token(path),
    require_approval: 'on',
    approval: '*@thescoop.com\nmara@thescoop.com',
  });
  expect((await v.get(same.headers.location!)).text).not.toContain('are void');
  expect((await t.admin().get(`/api/agents/${sundae.id}/toolkits/${sundae.finance}`).expect(200)).body.approval).toEqual({
    approvers: ['*@thescoop.com', 'mara@thescoop.com'],
  });
  const refused = await v.post(`${path}/approval`, { _csrf: await v.token(path), require_approval: 'on', approval: '*thescoop.com' });
  expect(refused.status).toBe(422);
  expect(refused.text).toMatch(/id="approvers-error"[^>]*>[^<]*@/);
  const off = await v.post(`${path}/approval`, { _csrf: await v.token(path), approval: '' });
  expect(off.status).toBe(303);
  expect((await t.admin().get(`/api/agents/${sundae.id}/toolkits/${sundae.finance}`).expect(200)).body.approval).toBeNull();
});

test("when an operator sets the agent's escalation address, then it is kept as a routing key, and a value that is no address is refused", async () => {
  const path = `/admin/agents/${sundae.id}`;
  expect(
    (await v.post(`${path}/escalation`, { _csrf: await v.token(path), escalation_address: 'Omar <Omar+desk@Example.org>' })).status,
  ).toBe(303);
  expect((await t.admin().get(`/api/agents/${sundae.id}`).expect(200)).body.escalation_address).toBe('omar@example.org');
  const refused = await v.post(`${path}/escalation`, { _csrf: await v.token(path), escalation_address: 'not an address' });
  expect(refused.status).toBe(422);
  expect(refused.text).toContain('An escalation address is one email address');
});

test('when approving a request would pass a cap, then Approvals says so, and the request stays pending', async () => {
  await t.sequelize.query("DELETE FROM scoop_refunds; UPDATE scoop_orders SET status = 'delivered' WHERE id IN ('SCP-1042', 'SCP-1043')");
  const capped = await createSundae(t, 'approval', { name: 'Capped' });
  await t
    .admin()
    .patch(`/api/agents/${capped.id}/toolkits/${capped.finance}`)
    .send({ caps: [{ tool_id: 'process_refund', per: 'sender', limit: 1, window: '1d' }] })
    .expect(200);
  const file = async (order: string) =>
    (
      await t
        .client()
        .post(`/api/agents/${capped.id}/tool-calls`)
        .send({ tool: 'process_refund', input: { order_id: order }, sender: 'jane@acme.com' })
        .expect(202)
    ).body.approval_request_id as number;
  const [first, second] = [await file('SCP-1042'), await file('SCP-1043')];
  const approve = async (id: number) =>
    v.post(`/admin/approvals/${capped.id}/${id}/approve`, { _csrf: await v.token(`/admin/approvals?agent=${capped.id}`) });
  expect((await approve(first)).status).toBe(303);
  const over = await approve(second);
  expect(over.status).toBe(303);
  expect((await v.get(over.headers.location!)).text).toMatch(/over its cap/);
  expect((await t.admin().get(`/api/agents/${capped.id}/approval-requests/${second}`).expect(200)).body.status).toBe('pending');
});

test("when a pending request's input holds a right-to-left override, then Approvals shows it escaped, so the input reads as it is", async () => {
  // A host tool may take any string (an address, say); the demo's order ids are strict, so the stored input is set directly.
  const spoofed = await createSundae(t, 'approval', { name: 'Spoofed' });
  const filed = await t
    .client()
    .post(`/api/agents/${spoofed.id}/tool-calls`)
    .send({ tool: 'process_refund', input: { order_id: 'SCP-1050' }, sender: 'jane@acme.com' })
    .expect(202);
  const id = filed.body.approval_request_id as number;
  await t.sequelize.query("UPDATE approval_requests SET input = jsonb_build_object('to', :to::text) WHERE id = :id", {
    replacements: { id, to: '\u202emoc.poocseht@aram' },
  });
  const page = await v.get(`/admin/approvals?agent=${spoofed.id}`);
  expect(page.text).toContain(`Request ${id}`);
  expect(page.text).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/u);
  expect(page.text).toContain('[U+202E]</span>moc.poocseht@aram');
});
