// Approvals bound to arguments (SEMANTICS §12), on the local model: the seed's approval variation.
// Refunds are open to every sender, with approval by *@thescoop.com. Jane's "I would like a refund"
// files request R for exactly SCP-1042; Mara's "Approved" on the same thread runs exactly R, once;
// everything else that could run it again, or run something else in its name, is refused.
import { QueryTypes } from 'sequelize';
import { z } from 'zod';
import { defineTool } from '../../src/tools/tool-registry';
import { createSecondInstance, createTestApp, type TestApp } from '../support/app';
import { createSundae, type Sundae } from '../support/scoop';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface Step {
  tool: string;
  input: Record<string, unknown>;
  status: string;
  approval_request_id?: number;
  output?: Record<string, unknown>;
  error?: string;
}
interface RunAnswer {
  thread_id: string;
  tools_offered: string[];
  needs_approval: string[];
  steps: Step[];
  decided?: { request_id: number; status: string; tool: string; input: unknown; requested_by: string | null; result?: unknown }[];
  undecided?: { request_id: number; code: string; tool: string; input: unknown; reason: string }[];
  reply: { text: string; to: string[]; cc: string[]; message_id: string };
}

const post = async (agent: number, body: Record<string, unknown>): Promise<RunAnswer> =>
  (await t.client().post(`/api/agents/${agent}/messages`).send(body).expect(200)).body;
const JANE = { from: 'Jane <jane@acme.com>', subject: 'Melted order', body: 'Order SCP-1042 arrived melted. I would like a refund.' };
const MARA = { from: 'Mara <Mara+billing@TheScoop.com>', subject: 'Re: Melted order', body: 'Approved, process it.' };

const refunds = async () =>
  await t.sequelize.query<{ order_id: string; approved_by: string }>('SELECT order_id, approved_by FROM scoop_refunds ORDER BY id', {
    type: QueryTypes.SELECT,
  });
const resetOrders = () =>
  t.sequelize.query("DELETE FROM scoop_refunds; UPDATE scoop_orders SET status = 'delivered' WHERE id IN ('SCP-1042', 'SCP-1043')");
const requests = async (agent: number) =>
  (await t.admin().get(`/api/agents/${agent}/approval-requests`).expect(200)).body as {
    id: number;
    code: string;
    status: string;
    input: unknown;
  }[];
const records = (agent: number) =>
  t.sequelize.query<{
    tool_id: string;
    status: string;
    routing_key: string | null;
    approval_request_id: number | null;
    approved_by: string | null;
  }>('SELECT tool_id, status, routing_key, approval_request_id, approved_by FROM tool_calls WHERE agent_id = :agent ORDER BY id', {
    replacements: { agent },
    type: QueryTypes.SELECT,
  });

describe('when Jane asks for a refund and Mara approves it on the same thread', () => {
  let sundae: Sundae;
  let jane: RunAnswer;
  let request: number;

  beforeAll(async () => {
    await resetOrders();
    sundae = await createSundae(t, 'approval');
    jane = await post(sundae.id, { message: JANE });
    request = jane.steps.find((s) => s.tool === 'process_refund')!.approval_request_id!;
  });

  test("then Jane's run is offered process_refund as a tool it may only request, and her call files request R for exactly SCP-1042", async () => {
    expect(jane.tools_offered).toEqual(['check_flavor_stock', 'lookup_order', 'process_refund']);
    expect(jane.needs_approval).toEqual(['process_refund']);
    expect(jane.steps[0]).toMatchObject({
      tool: 'process_refund',
      input: { order_id: 'SCP-1042' },
      status: 'pending_approval',
      approval_request_id: expect.any(Number),
    });
    const [filed] = await requests(sundae.id);
    expect(filed).toMatchObject({
      id: request,
      tool: 'process_refund',
      input: { order_id: 'SCP-1042' },
      status: 'pending',
      requested_by: { run: 'sender', routing_key: 'jane@acme.com', thread_id: jane.thread_id },
      attachment_id: sundae.finance,
      decided_by: null,
      result: null,
    });
  });

  test('then nothing ran: one pending_approval record, no refund, and the reply says it awaits approval and copies the shop', async () => {
    expect((await records(sundae.id)).filter((r) => r.tool_id === 'process_refund')).toEqual([
      {
        tool_id: 'process_refund',
        status: 'pending_approval',
        routing_key: 'jane@acme.com',
        approval_request_id: request,
        approved_by: null,
      },
    ]);
    expect(await refunds()).toEqual([]);
    expect(jane.reply.text).toMatch(new RegExp(`request ${request}`));
    expect(jane.reply.cc).toEqual(['mara@thescoop.com']);
  });

  test('then Jane asking again gets the same request back: no second request, no second record', async () => {
    const again = await post(sundae.id, {
      thread_id: jane.thread_id,
      message: { from: 'jane@acme.com', body: 'Please refund SCP-1042, I would like a refund.' },
    });
    expect(again.steps.find((s) => s.tool === 'process_refund')).toMatchObject({
      status: 'pending_approval',
      approval_request_id: request,
    });
    expect((await requests(sundae.id)).map((r) => r.id)).toEqual([request]);
    expect((await records(sundae.id)).filter((r) => r.status === 'pending_approval')).toHaveLength(1);
  });

  test('then Jane\'s own "Approved" decides nothing: she is no approver, so her run is not offered approve_request', async () => {
    const own = await post(sundae.id, { thread_id: jane.thread_id, message: { from: 'jane@acme.com', body: 'Approved, process it.' } });
    expect(own.tools_offered).not.toContain('approve_request');
    expect(own.steps.every((s) => s.status !== 'success' || s.tool !== 'process_refund')).toBe(true);
    expect(await refunds()).toEqual([]);
    expect((await requests(sundae.id))[0]?.status).toBe('pending');
  });

  describe('and Mara writes "Approved, process it."', () => {
    let mara: RunAnswer;

    beforeAll(async () => {
      mara = await post(sundae.id, { thread_id: jane.thread_id, message: MARA });
    });

    test('then toolgate decides R from her own text before the model runs: no approve_request tool, no step, R in decided', () => {
      expect(mara.tools_offered).toEqual(['check_flavor_stock', 'lookup_order', 'process_refund']);
      expect(mara.steps.filter((s) => s.tool === 'process_refund')).toEqual([]);
      expect(mara.decided).toEqual([
        {
          request_id: request,
          tool: 'process_refund',
          input: { order_id: 'SCP-1042' },
          requested_by: 'jane@acme.com',
          status: 'approved',
          result: { status: 'success', output: { order_id: 'SCP-1042', refunded: true, amount_cents: 1899 } },
        },
      ]);
      expect(mara.undecided).toBeUndefined();
    });

    test("then the stored input ran exactly once, on Jane's behalf, its record naming requester and approver", async () => {
      expect(await refunds()).toEqual([{ order_id: 'SCP-1042', approved_by: 'mara@thescoop.com' }]);
      expect((await records(sundae.id)).filter((r) => r.tool_id === 'process_refund' && r.status === 'success')).toEqual([
        {
          tool_id: 'process_refund',
          status: 'success',
          routing_key: 'jane@acme.com',
          approval_request_id: request,
          approved_by: 'mara@thescoop.com',
        },
      ]);
      const [decided] = await requests(sundae.id);
      expect(decided).toMatchObject({
        status: 'approved',
        decided_by: { via: 'message', routing_key: 'mara@thescoop.com' },
        result: { status: 'success' },
      });
    });

    test('then the reply goes to Mara and copies Jane, the requester', () => {
      expect(mara.reply.to).toEqual(['Mara <Mara+billing@TheScoop.com>']);
      expect(mara.reply.cc).toEqual(['jane@acme.com']);
      expect(mara.reply.text).toMatch(
        new RegExp(`Request ${request} \\(process_refund \\{"order_id":"SCP-1042"\\}\\) is approved: it ran once\\.`),
      );
    });

    test('then a second approval of the same request is a 409 and nothing runs', async () => {
      const again = await t.admin().post(`/api/agents/${sundae.id}/approval-requests/${request}/approve`).expect(409);
      expect(again.body).toMatchObject({ code: 'conflict', detail: expect.stringMatching(/is approved.*nothing ran/) });
      const byMessage = await post(sundae.id, { thread_id: jane.thread_id, message: MARA });
      expect(byMessage.decided).toBeUndefined();
      // Mara may refund, and her message approves: with nothing left to decide, a careless model
      // would refund the order again. The thread shows it refunded, so nothing is called.
      expect(byMessage.steps.filter((s) => s.tool === 'process_refund')).toEqual([]);
      expect(byMessage.reply.text).toMatch(/SCP-1042 was already refunded in this thread/);
      expect((await refunds()).length).toBe(1);
    });
  });
});

describe('when an operator decides through the admin API', () => {
  test('then approval runs the stored input, answers after it ran with its result, and a body naming another order changes nothing', async () => {
    await resetOrders();
    const sundae = await createSundae(t, 'approval');
    const jane = await post(sundae.id, { message: JANE });
    const id = jane.steps.find((s) => s.tool === 'process_refund')!.approval_request_id!;
    const approved = await t
      .admin()
      .post(`/api/agents/${sundae.id}/approval-requests/${id}/approve`)
      .send({ input: { order_id: 'SCP-1043' } })
      .expect(200);
    expect(approved.body).toMatchObject({
      id,
      status: 'approved',
      decided_by: { via: 'admin', routing_key: null },
      result: { status: 'success', output: { order_id: 'SCP-1042', refunded: true } },
    });
    expect((await refunds()).map((r) => r.order_id)).toEqual(['SCP-1042']);
    expect((await records(sundae.id)).at(-1)).toMatchObject({
      tool_id: 'process_refund',
      status: 'success',
      routing_key: 'jane@acme.com',
      approved_by: 'admin',
    });
  });

  test('then a denial is final: the request never runs, and approving it afterwards is a 409', async () => {
    await resetOrders();
    const sundae = await createSundae(t, 'approval');
    const jane = await post(sundae.id, { message: JANE });
    const id = jane.steps.find((s) => s.tool === 'process_refund')!.approval_request_id!;
    expect((await t.admin().post(`/api/agents/${sundae.id}/approval-requests/${id}/deny`).expect(200)).body).toMatchObject({
      status: 'denied',
      result: null,
    });
    await t.admin().post(`/api/agents/${sundae.id}/approval-requests/${id}/approve`).expect(409);
    expect(await refunds()).toEqual([]);
  });

  test("then another agent's request, and one that does not exist, are 404s", async () => {
    const sundae = await createSundae(t, 'approval');
    const scout = await createSundae(t, 'approval', { name: 'Scout' });
    const jane = await post(sundae.id, { message: JANE });
    const id = jane.steps.find((s) => s.tool === 'process_refund')!.approval_request_id!;
    await t.admin().post(`/api/agents/${scout.id}/approval-requests/${id}/approve`).expect(404);
    await t.admin().get(`/api/agents/${sundae.id}/approval-requests/999999`).expect(404);
    await t.client().get(`/api/agents/${sundae.id}/approval-requests`).expect(403);
  });
});

describe('when Mara decides by message with several requests pending in the thread', () => {
  let sundae: Sundae;
  let thread: string;
  let ids: number[];

  beforeAll(async () => {
    await resetOrders();
    sundae = await createSundae(t, 'approval');
    const first = await post(sundae.id, { message: JANE });
    thread = first.thread_id;
    const second = await post(sundae.id, {
      thread_id: thread,
      message: { from: 'jane@acme.com', body: 'Order SCP-1043 melted too. I would like a refund for it as well.' },
    });
    ids = [first, second].map((a) => a.steps.find((s) => s.tool === 'process_refund')!.approval_request_id!);
  });

  test('then a plain "Approved" decides none of them, and the answer and the reply list each with its code', async () => {
    const mara = await post(sundae.id, { thread_id: thread, message: MARA });
    expect(mara.decided).toBeUndefined();
    expect(mara.steps.filter((s) => s.tool === 'process_refund' && s.status === 'success')).toEqual([]);
    const pending = await requests(sundae.id);
    expect(mara.undecided?.map((u) => u.request_id).sort()).toEqual([...ids].sort());
    for (const r of pending) expect(mara.reply.text).toContain(`"approve ${r.code}" or "deny ${r.code}"`);
    expect(await refunds()).toEqual([]);
  });

  test("then a message with one request's code decides exactly that one", async () => {
    const code = (await requests(sundae.id)).find((r) => r.id === ids[1])!.code;
    const mara = await post(sundae.id, { thread_id: thread, message: { ...MARA, body: `approve ${code}` } });
    expect(mara.decided).toEqual([expect.objectContaining({ request_id: ids[1], status: 'approved' })]);
    expect((await refunds()).map((r) => r.order_id)).toEqual(['SCP-1043']);
    expect((await requests(sundae.id)).map((r) => [r.id, r.status])).toEqual([
      [ids[1], 'approved'],
      [ids[0], 'pending'],
    ]);
  });

  test('then "Denied, sorry." decides the thread\'s only pending request, which never runs', async () => {
    const mara = await post(sundae.id, { thread_id: thread, message: { ...MARA, body: 'Denied, sorry.' } });
    expect(mara.decided).toEqual([expect.objectContaining({ request_id: ids[0], status: 'denied' })]);
    expect((await refunds()).map((r) => r.order_id)).toEqual(['SCP-1043']);
  });
});

describe('when a request outlives its terms', () => {
  test('then one past its time is expired: listed so, and approving it is a 409 that runs nothing', async () => {
    await resetOrders();
    const sundae = await createSundae(t, 'approval');
    const jane = await post(sundae.id, { message: JANE });
    const id = jane.steps.find((s) => s.tool === 'process_refund')!.approval_request_id!;
    await t.sequelize.query("UPDATE approval_requests SET expires_at = now() - interval '1 second' WHERE id = :id", {
      replacements: { id },
    });
    expect(
      (await t.admin().get(`/api/agents/${sundae.id}/approval-requests?status=expired`).expect(200)).body.map((r: { id: number }) => r.id),
    ).toEqual([id]);
    expect((await t.admin().post(`/api/agents/${sundae.id}/approval-requests/${id}/approve`).expect(409)).body.detail).toMatch(
      /is expired/,
    );
    expect(await refunds()).toEqual([]);
    // Asking again after it expired files a new request.
    const again = await post(sundae.id, {
      thread_id: jane.thread_id,
      message: { from: 'jane@acme.com', body: 'I would like a refund for SCP-1042.' },
    });
    const filedAgain = again.steps.find((s) => s.tool === 'process_refund')?.approval_request_id;
    expect(filedAgain).toEqual(expect.any(Number));
    expect(filedAgain).not.toBe(id);
  });

  test('then changing the approvers voids it, and so does detaching the attachment', async () => {
    await resetOrders();
    const sundae = await createSundae(t, 'approval');
    const first = await post(sundae.id, { message: JANE });
    const id = first.steps.find((s) => s.tool === 'process_refund')!.approval_request_id!;
    // The same list again is no change.
    await t
      .admin()
      .patch(`/api/agents/${sundae.id}/toolkits/${sundae.finance}`)
      .send({ approval: { approvers: ['*@TheScoop.com'] } })
      .expect(200);
    expect((await t.admin().get(`/api/agents/${sundae.id}/approval-requests/${id}`).expect(200)).body.status).toBe('pending');
    await t
      .admin()
      .patch(`/api/agents/${sundae.id}/toolkits/${sundae.finance}`)
      .send({ approval: { approvers: ['mara@thescoop.com'] } })
      .expect(200);
    expect((await t.admin().get(`/api/agents/${sundae.id}/approval-requests/${id}`).expect(200)).body).toMatchObject({
      status: 'void',
      void_reason: 'the approvers changed',
    });
    await t.admin().post(`/api/agents/${sundae.id}/approval-requests/${id}/approve`).expect(409);

    const second = await post(sundae.id, {
      thread_id: first.thread_id,
      message: { from: 'jane@acme.com', body: 'I would like a refund for SCP-1042.' },
    });
    const next = second.steps.find((s) => s.tool === 'process_refund')!.approval_request_id!;
    await t.admin().delete(`/api/agents/${sundae.id}/toolkits/${sundae.finance}`).expect(204);
    expect((await t.admin().get(`/api/agents/${sundae.id}/approval-requests/${next}`).expect(200)).body).toMatchObject({
      status: 'void',
      void_reason: 'the attachment was detached',
    });
    await t.admin().post(`/api/agents/${sundae.id}/approval-requests/${next}/approve`).expect(409);
    expect(await refunds()).toEqual([]);
  });

  test('then one whose attachment no longer grants the tool to the requester becomes void when approved, and nothing runs', async () => {
    await resetOrders();
    const sundae = await createSundae(t, 'approval');
    const jane = await post(sundae.id, { message: JANE });
    const id = jane.steps.find((s) => s.tool === 'process_refund')!.approval_request_id!;
    await t
      .admin()
      .patch(`/api/agents/${sundae.id}/toolkits/${sundae.finance}`)
      .send({ rules: [{ kind: 'deny', pattern: 'jane@acme.com' }] })
      .expect(200);
    const refused = await t.admin().post(`/api/agents/${sundae.id}/approval-requests/${id}/approve`).expect(409);
    expect(refused.body.detail).toMatch(/void.*no longer grants/);
    expect(await refunds()).toEqual([]);
  });
});

describe('when two instances approve the same request at the same moment', () => {
  test('then it runs once: one answer is the result, the other a 409, and there is one execution record', async () => {
    await resetOrders();
    const second = await createSecondInstance(t);
    try {
      const sundae = await createSundae(t, 'approval');
      const filed = await t
        .client()
        .post(`/api/agents/${sundae.id}/tool-calls`)
        .send({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' })
        .expect(202);
      expect(filed.body).toMatchObject({ status: 'pending_approval', request: { status: 'pending', input: { order_id: 'SCP-1042' } } });
      const id = filed.body.approval_request_id as number;
      const answers = await Promise.all(
        [t, second, t, second].map((instance) => instance.admin().post(`/api/agents/${sundae.id}/approval-requests/${id}/approve`)),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409]);
      expect(await refunds()).toHaveLength(1);
      expect((await records(sundae.id)).filter((r) => r.tool_id === 'process_refund' && r.status !== 'pending_approval')).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});

describe('when a route runs a tool the sender may only request', () => {
  test('then it is refused with 403 approval_required and a denied record: such a route cannot file a request', async () => {
    const sundae = await createSundae(t, 'approval');
    const kit = await makeToolkit(t, 'Approved analysis', ['email_analyzer']);
    await t
      .admin()
      .post(`/api/agents/${sundae.id}/toolkits`)
      .send({ toolkit_id: kit, approval: { approvers: ['*@thescoop.com'] } })
      .expect(201);
    const refused = await t
      .client()
      .post(`/api/agents/${sundae.id}/email/analyze`)
      .send({ from: 'jane@acme.com', body: 'Please refund my order.' })
      .expect(403);
    expect(refused.body).toMatchObject({ code: 'approval_required', tool: 'email_analyzer' });
    expect((await records(sundae.id)).at(-1)).toMatchObject({ tool_id: 'email_analyzer', status: 'denied' });
    await t
      .client()
      .post(`/api/agents/${sundae.id}/email/analyze`)
      .send({ from: 'mara@thescoop.com', body: 'Please refund my order.' })
      .expect(200);
  });
});

describe('when an operator explains what a sender gets', () => {
  test('then the resolution says which tools need approval, and that another attachment offering one without approval wins', async () => {
    const sundae = await createSundae(t, 'approval');
    const explained = (await t.admin().get(`/api/agents/${sundae.id}/tools?sender=jane@acme.com`).expect(200)).body;
    expect(explained.needs_approval).toEqual(['process_refund']);
    expect(explained.attachments.find((a: { attachment_id: number }) => a.attachment_id === sundae.finance)).toMatchObject({
      approval: { approvers: ['*@thescoop.com'] },
      needs_approval: true,
    });
    expect((await t.admin().get(`/api/agents/${sundae.id}/tools?sender=mara@thescoop.com`).expect(200)).body.needs_approval).toEqual([]);
    const direct = await makeToolkit(t, 'Refunds for Jane', ['process_refund']);
    await t
      .admin()
      .post(`/api/agents/${sundae.id}/toolkits`)
      .send({ toolkit_id: direct, rules: [{ kind: 'allow', pattern: 'jane@acme.com' }] })
      .expect(201);
    expect((await t.admin().get(`/api/agents/${sundae.id}/tools?sender=jane@acme.com`).expect(200)).body.needs_approval).toEqual([]);
  });
});

describe('when requests are filed and decided', () => {
  test('then /metrics counts them by what happened to them, with no sender or input in a label', async () => {
    await resetOrders();
    const metrics = async () => (await t.admin().get('/metrics').expect(200)).text;
    const count = (text: string, outcome: string) =>
      Number(new RegExp(`toolgate_approval_requests_total\\{outcome="${outcome}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
    const before = await metrics();
    const sundae = await createSundae(t, 'approval');
    const jane = await post(sundae.id, { message: JANE });
    const id = jane.steps.find((s) => s.tool === 'process_refund')!.approval_request_id!;
    await t.admin().post(`/api/agents/${sundae.id}/approval-requests/${id}/approve`).expect(200);
    const after = await metrics();
    expect(count(after, 'requested') - count(before, 'requested')).toBe(1);
    expect(count(after, 'approved') - count(before, 'approved')).toBe(1);
    expect(after).toMatch(/toolgate_tool_calls_total\{status="pending_approval"\} \d+/);
    expect(after).not.toMatch(/jane@acme\.com|SCP-1042/);
  });
});

describe("when a tool's schema transforms its input", () => {
  test('then the request keeps the input as asked, and approval runs it transformed once', async () => {
    const charged: number[] = [];
    const charge = defineTool({
      id: 'charge_dollars',
      display_name: 'Charge',
      summary: 'Charges an amount given in dollars, in cents.',
      input: z.strictObject({
        dollars: z
          .number()
          .int()
          .transform((d) => d * 100),
      }),
      execute: ({ dollars }) => {
        charged.push(dollars);
        return { cents: dollars };
      },
    });
    const app = await createTestApp({ tools: [charge] });
    try {
      const kit = await makeToolkit(app, 'Charges', ['charge_dollars']);
      const agent = await makeAgent(app, { name: 'Till', toolkit_ids: [] });
      await app
        .admin()
        .post(`/api/agents/${agent}/toolkits`)
        .send({ toolkit_id: kit, approval: { approvers: [] } })
        .expect(201);
      const filed = (
        await app
          .client()
          .post(`/api/agents/${agent}/tool-calls`)
          .send({ tool: 'charge_dollars', input: { dollars: 5 }, sender: 'jane@acme.com' })
          .expect(202)
      ).body;
      expect(filed.request.input).toEqual({ dollars: 5 });
      const approved = (await app.admin().post(`/api/agents/${agent}/approval-requests/${filed.approval_request_id}/approve`).expect(200))
        .body;
      expect(approved.result).toEqual({ status: 'success', output: { cents: 500 } });
      expect(charged).toEqual([500]);
    } finally {
      await app.close();
    }
  });
});
