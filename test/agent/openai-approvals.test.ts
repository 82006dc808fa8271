// Approvals through the real `openai` client against a local server that speaks Chat Completions
// (SEMANTICS §12, §12a): the model is told which tool needs approval, a call of it files a request
// and comes back "awaiting approval"; toolgate, not the model, reads an approver's message for a
// decision and runs the stored input once; no model is offered approve_request, and a model that
// calls a pending request's very call does not decide it.
import { QueryTypes } from 'sequelize';
import { OpenAIModel } from '../../src/llm/openai-model';
import { createTestApp, type TestApp } from '../support/app';
import { completion, startFakeOpenAI, toolCalls, type FakeOpenAI, type RecordedRequest } from '../support/fake-openai';
import { createSundae, type Sundae } from '../support/scoop';

let fake: FakeOpenAI;
let t: TestApp;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  t = await createTestApp({
    model: new OpenAIModel({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'gpt-test', timeoutMs: 5_000, maxRetries: 0 }),
  });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

interface SentBody {
  tools?: { function: { name: string; description: string } }[];
  messages: { role: string; content?: string | null }[];
}
const sent = (r: RecordedRequest | undefined) => r?.body as SentBody;
const post = async (agent: number, body: Record<string, unknown>) =>
  (await t.client().post(`/api/agents/${agent}/messages`).send(body).expect(200)).body;
const refunds = async () =>
  (await t.sequelize.query<{ order_id: string }>('SELECT order_id FROM scoop_refunds ORDER BY id', { type: QueryTypes.SELECT })).map(
    (r) => r.order_id,
  );
const resetOrders = () =>
  t.sequelize.query(
    "DELETE FROM scoop_refunds; UPDATE scoop_orders SET status = 'delivered' WHERE id IN ('SCP-1042', 'SCP-1043'); UPDATE scoop_orders SET status = 'shipped' WHERE id = 'SCP-1050'",
  );
const pendingOf = async (agent: number) =>
  (await t.admin().get(`/api/agents/${agent}/approval-requests?status=pending`).expect(200)).body as {
    id: number;
    code: string;
    input: unknown;
  }[];

describe("when the model asks for a refund on Jane's behalf, and then for Mara", () => {
  let sundae: Sundae;
  let jane: { thread_id: string; steps: { tool: string; status: string; approval_request_id?: number }[] };
  let janeRequests: RecordedRequest[];
  let request: number;

  beforeAll(async () => {
    await resetOrders();
    sundae = await createSundae(t, 'approval');
    fake.requests.length = 0;
    fake.script((_req, i) =>
      i === 0 ? toolCalls([['process_refund', '{"order_id":"SCP-1042"}']]) : completion('Your refund awaits the shop. — Sundae'),
    );
    jane = await post(sundae.id, {
      message: { from: 'jane@acme.com', subject: 'Melted order', body: 'Order SCP-1042 arrived melted. I would like a refund.' },
    });
    janeRequests = [...fake.requests];
    request = jane.steps[0]!.approval_request_id!;
  });

  test('then the model is told the tool needs approval, and the call comes back to it awaiting approval, request R', () => {
    const refund = sent(janeRequests[0]).tools?.find((tool) => tool.function.name === 'process_refund');
    expect(refund?.function.description).toMatch(/Needs approval for this sender/);
    expect(jane.steps).toEqual([
      expect.objectContaining({ tool: 'process_refund', status: 'pending_approval', approval_request_id: expect.any(Number) }),
    ]);
    const result = sent(janeRequests[1]).messages.find((m) => m.role === 'tool');
    expect(JSON.parse(result?.content ?? '{}')).toMatchObject({
      status: 'pending_approval',
      output: { request_id: request, status: 'awaiting_approval' },
    });
  });

  test("then a model in Jane's run that calls approve_request is refused at dispatch: she may decide nothing", async () => {
    fake.requests.length = 0;
    fake.script((_req, i) =>
      i === 0 ? toolCalls([['approve_request', JSON.stringify({ request_id: request })]]) : completion('I cannot approve it. — Sundae'),
    );
    const again = await post(sundae.id, {
      thread_id: jane.thread_id,
      message: { from: 'jane@acme.com', body: 'Please approve my refund yourself.' },
    });
    expect(sent(fake.requests[0]).tools?.map((tool) => tool.function.name)).not.toContain('approve_request');
    expect(again.steps).toEqual([expect.objectContaining({ tool: 'approve_request', status: 'denied' })]);
    expect(await refunds()).toEqual([]);
    const [denied] = await t.sequelize.query<{ status: string; routing_key: string }>(
      "SELECT status, routing_key FROM tool_calls WHERE agent_id = :a AND tool_id = 'approve_request'",
      { replacements: { a: sundae.id }, type: QueryTypes.SELECT },
    );
    expect(denied).toEqual({ status: 'denied', routing_key: 'jane@acme.com' });
  });

  test("then a model in Jane's run that changes the order files another request and runs nothing", async () => {
    fake.requests.length = 0;
    fake.script((_req, i) => (i === 0 ? toolCalls([['process_refund', '{"order_id":"SCP-1050"}']]) : completion('Asked. — Sundae')));
    const other = await post(sundae.id, {
      thread_id: jane.thread_id,
      message: { from: 'jane@acme.com', body: 'Refund the other one too.' },
    });
    expect(other.steps[0]).toMatchObject({ status: 'pending_approval' });
    expect(other.steps[0].approval_request_id).toEqual(expect.any(Number));
    expect(other.steps[0].approval_request_id).not.toBe(request);
    expect(await refunds()).toEqual([]);
  });

  describe("and Mara approves Jane's request by its code", () => {
    let mara: {
      steps: { tool: string; status: string; input: unknown; error?: string; output?: unknown; approval_request_id?: number }[];
      decided?: { request_id: number; status: string }[];
    };
    let maraRequests: RecordedRequest[];
    let other: { id: number };

    beforeAll(async () => {
      const pending = await pendingOf(sundae.id);
      other = pending.find((r) => r.id !== request)!;
      const code = pending.find((r) => r.id === request)!.code;
      fake.requests.length = 0;
      // Her model tries to decide as well, and to run the other pending request's call itself.
      fake.script((_req, i) =>
        i === 0
          ? toolCalls([
              ['approve_request', JSON.stringify({ request_id: other.id })],
              ['process_refund', '{"order_id":"SCP-1050"}'],
            ])
          : completion('Approved and refunded. — Sundae'),
      );
      mara = await post(sundae.id, { thread_id: jane.thread_id, message: { from: 'mara@thescoop.com', body: `approve ${code}` } });
      maraRequests = [...fake.requests];
    });

    test("then her model reads in the thread's history which request Jane's call became", () => {
      const results = sent(maraRequests[0])
        .messages.filter((m) => m.role === 'tool')
        .map((m) => String(m.content));
      // The history's results are JSON text inside the message's JSON: quotes come escaped.
      expect(
        results.some((content) => new RegExp(`request_id\\\\?":${request}\\b`).test(content) && content.includes('awaiting_approval')),
      ).toBe(true);
    });

    test('then toolgate decided it before the model ran, told the model so, and offered it no approve_request', () => {
      expect(mara.decided).toEqual([expect.objectContaining({ request_id: request, status: 'approved' })]);
      const first = sent(maraRequests[0]);
      expect(first.tools?.map((tool) => tool.function.name)).not.toContain('approve_request');
      const note = first.messages.filter((m) => m.role === 'system').at(-1)?.content ?? '';
      expect(note).toContain(`Request ${request} (process_refund {"order_id":"SCP-1042"}) was approved and ran once`);
      expect(note).not.toMatch(/approve [0-9A-Z]{8}/);
    });

    test("then the model's approve_request is refused at dispatch, and its call of the other request's input decides nothing and runs nothing", async () => {
      expect(mara.steps[0]).toMatchObject({ tool: 'approve_request', status: 'denied' });
      expect(mara.steps[1]).toMatchObject({ tool: 'process_refund', status: 'pending_approval', approval_request_id: other.id });
      expect(await refunds()).toEqual(['SCP-1042']);
      expect((await pendingOf(sundae.id)).map((r) => r.id)).toEqual([other.id]);
    });
  });
});

describe("when an approver's model calls the very tool and input a pending request asks for", () => {
  test('then the request stays pending and nothing runs: calling a pending call is not deciding it', async () => {
    await resetOrders();
    const sundae = await createSundae(t, 'approval');
    fake.script((_req, i) => (i === 0 ? toolCalls([['process_refund', '{"order_id":"SCP-1042"}']]) : completion('Noted. — Sundae')));
    const jane = await post(sundae.id, {
      message: { from: 'jane@acme.com', body: 'Order SCP-1042 arrived melted. I would like a refund.' },
    });
    const [request] = await pendingOf(sundae.id);
    fake.requests.length = 0;
    fake.script((_req, i) => (i === 0 ? toolCalls([['process_refund', '{"order_id":"SCP-1042"}']]) : completion('Done. — Sundae')));
    const mara = await post(sundae.id, { thread_id: jane.thread_id, message: { from: 'mara@thescoop.com', body: 'Thanks, noted.' } });
    expect(mara.steps).toEqual([
      expect.objectContaining({ tool: 'process_refund', status: 'pending_approval', approval_request_id: request!.id }),
    ]);
    expect((await pendingOf(sundae.id)).map((r) => r.id)).toEqual([request!.id]);
    expect(await refunds()).toEqual([]);
  });
});

describe('when a model asks again for exactly what an approved request ran', () => {
  test('then the call does not run, nor get filed, again: in the approving run, and in a later message of the thread', async () => {
    await resetOrders();
    const sundae = await createSundae(t, 'approval');
    fake.requests.length = 0;
    fake.script((_req, i) => (i === 0 ? toolCalls([['process_refund', '{"order_id":"SCP-1042"}']]) : completion('Noted. — Sundae')));
    const jane = await post(sundae.id, {
      message: { from: 'jane@acme.com', body: 'Order SCP-1042 arrived melted. I would like a refund.' },
    });
    const [request] = await pendingOf(sundae.id);
    // Mara approves; her model then calls the tool itself with the same input, in the same run.
    fake.requests.length = 0;
    fake.script((_req, i) => (i === 0 ? toolCalls([['process_refund', '{"order_id":"SCP-1042"}']]) : completion('Done. — Sundae')));
    const mara = await post(sundae.id, { thread_id: jane.thread_id, message: { from: 'mara@thescoop.com', body: 'Approved.' } });
    expect(mara.decided).toEqual([expect.objectContaining({ request_id: request!.id, status: 'approved' })]);
    expect(mara.steps.map((s: { tool: string; status: string }) => [s.tool, s.status])).toEqual([['process_refund', 'failure']]);
    expect(mara.steps[0]).toMatchObject({
      approval_request_id: request!.id,
      error: expect.stringMatching(/already ran exactly this call/),
    });
    // Jane's model, in a later message, asks for the same refund: no new request, nothing runs.
    fake.requests.length = 0;
    fake.script((_req, i) => (i === 0 ? toolCalls([['process_refund', '{"order_id":"SCP-1042"}']]) : completion('Noted. — Sundae')));
    const again = await post(sundae.id, { thread_id: jane.thread_id, message: { from: 'jane@acme.com', body: 'Please refund SCP-1042.' } });
    expect(again.steps).toEqual([expect.objectContaining({ tool: 'process_refund', status: 'failure', approval_request_id: request!.id })]);
    expect(await pendingOf(sundae.id)).toEqual([]);
    expect(await refunds()).toEqual(['SCP-1042']);
    const runs = await t.sequelize.query(
      "SELECT id FROM tool_calls WHERE agent_id = :a AND tool_id = 'process_refund' AND status = 'success'",
      { replacements: { a: sundae.id }, type: QueryTypes.SELECT },
    );
    expect(runs).toHaveLength(1);
  });
});
