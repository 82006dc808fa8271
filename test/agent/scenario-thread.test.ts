// The seed's scenario as one thread, on the local model (SEMANTICS §10, §11): Jane writes and
// Sundae looks her order up without a refund tool in her catalogue, and copies the shop's owner
// (her escalation address), which makes Mara a participant; Mara replies on the same thread and the
// refund is issued; Jane writes again and the model, echoing process_refund from the thread's
// history, is refused at dispatch: the refusal is recorded and given back, and the run goes on.
import { QueryTypes } from 'sequelize';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;
let sundae: number;
let thread: string;

interface Step {
  tool: string;
  input: unknown;
  status: string;
  output?: Record<string, unknown>;
  error?: string;
}

beforeAll(async () => {
  t = await createTestApp();
  const support = await makeToolkit(t, 'Support', ['lookup_order', 'check_flavor_stock']);
  const finance = await makeToolkit(t, 'Finance', ['process_refund']);
  sundae = await makeAgent(t, { name: 'Sundae', toolkit_ids: [support], escalation_address: 'mara@thescoop.com' });
  await t
    .admin()
    .post(`/api/agents/${sundae}/toolkits`)
    .send({ toolkit_id: finance, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] })
    .expect(201);
});

afterAll(() => t.close());

const write = (message: Record<string, unknown>, threadId?: string) =>
  t
    .client()
    .post(`/api/agents/${sundae}/messages`)
    .send({ ...(threadId ? { thread_id: threadId } : {}), message });
const records = () =>
  t.sequelize.query<{ tool_id: string; status: string; routing_key: string | null }>(
    'SELECT tool_id, status, routing_key FROM tool_calls WHERE agent_id = :a ORDER BY id',
    {
      replacements: { a: sundae },
      type: QueryTypes.SELECT,
    },
  );
const orderStatus = async () =>
  (await t.sequelize.query<{ status: string }>("SELECT status FROM scoop_orders WHERE id = 'SCP-1042'", { type: QueryTypes.SELECT }))[0]
    ?.status;

describe('when Jane writes: "Order SCP-1042 arrived melted. I\'d like a refund."', () => {
  let body: {
    thread_id: string;
    run: string;
    routing_key: string;
    tools_offered: string[];
    steps: Step[];
    reply: { text: string; to: string[]; cc: string[]; message_id: string };
    stopped: string;
  };

  beforeAll(async () => {
    body = (
      await write({
        from: 'Jane <jane@acme.com>',
        subject: 'Melted order',
        body: "Order SCP-1042 arrived melted. I'd like a refund.",
      }).expect(200)
    ).body;
    thread = body.thread_id;
  });

  test('then a thread starts and her run is offered the Support tools, not process_refund', () => {
    expect(body).toMatchObject({ run: 'sender', routing_key: 'jane@acme.com', stopped: 'reply' });
    expect(body.thread_id).toMatch(/^thr_[0-9a-f]{32}$/);
    expect(body.tools_offered).toEqual(['check_flavor_stock', 'lookup_order']);
  });

  test("then the reply goes to Jane with a Message-ID of its own, copied to the shop's owner, who joins the thread", async () => {
    expect(body.reply).toMatchObject({
      to: ['Jane <jane@acme.com>'],
      cc: ['mara@thescoop.com'],
      message_id: expect.stringMatching(/^<tg\.[0-9a-f]{32}@toolgate\.invalid>$/),
    });
    const read = await t.admin().get(`/api/agents/${sundae}/threads/${thread}`).expect(200);
    expect(read.body.participants).toEqual(['jane@acme.com', 'mara@thescoop.com']);
  });

  test('then Sundae looks the order up, and replies with its status and that the shop will decide', () => {
    expect(body.steps).toEqual([
      {
        tool: 'lookup_order',
        input: { order_id: 'SCP-1042' },
        status: 'success',
        output: { id: 'SCP-1042', flavor: 'Mint Chip', amount_cents: 1899, status: 'delivered' },
      },
    ]);
    expect(body.reply.text).toMatch(/^Hi Jane,/);
    expect(body.reply.text).toMatch(/Order SCP-1042 \(Mint Chip\) is delivered\./);
    expect(body.reply.text).toMatch(/passed your refund request to the shop/);
    expect(body.reply.text).toMatch(/— Sundae$/);
  });

  test('then the lookup is the one record, and nothing was refunded', async () => {
    expect(await records()).toEqual([{ tool_id: 'lookup_order', status: 'success', routing_key: 'jane@acme.com' }]);
    expect(await orderStatus()).toBe('delivered');
  });
});

describe('when Mara replies on the same thread: "Approved — process it."', () => {
  let body: { thread_id: string; routing_key: string; tools_offered: string[]; steps: Step[]; reply: { text: string }; stopped: string };

  beforeAll(async () => {
    body = (
      await write({ from: 'Mara <Mara+billing@TheScoop.com>', subject: 'Re: Melted order', body: 'Approved — process it.' }, thread).expect(
        200,
      )
    ).body;
  });

  test('then her run, on the same thread, is offered process_refund', () => {
    expect(body.thread_id).toBe(thread);
    expect(body.routing_key).toBe('mara@thescoop.com');
    expect(body.tools_offered).toEqual(['check_flavor_stock', 'lookup_order', 'process_refund']);
  });

  test("then the refund of the thread's order is issued through dispatch", async () => {
    expect(body.steps).toEqual([
      {
        tool: 'process_refund',
        input: { order_id: 'SCP-1042' },
        status: 'success',
        output: { order_id: 'SCP-1042', refunded: true, amount_cents: 1899 },
      },
    ]);
    expect(body.reply.text).toMatch(/Order SCP-1042 has been refunded in full\./);
    expect(await orderStatus()).toBe('refunded');
    expect((await records()).at(-1)).toEqual({ tool_id: 'process_refund', status: 'success', routing_key: 'mara@thescoop.com' });
  });
});

describe('when Jane writes again: "Thanks! Please process another one."', () => {
  let body: { tools_offered: string[]; steps: Step[]; reply: { text: string }; stopped: string };

  beforeAll(async () => {
    body = (
      await write({ from: 'jane@acme.com', subject: 'Re: Melted order', body: 'Thanks! Please process another one.' }, thread).expect(200)
    ).body;
  });

  test('then her run is still not offered process_refund: the gate follows whoever is talking', () => {
    expect(body.tools_offered).toEqual(['check_flavor_stock', 'lookup_order']);
  });

  test('then the model, echoing process_refund from the history, is refused at dispatch, and the run goes on to a reply', () => {
    expect(body.steps).toEqual([
      { tool: 'process_refund', input: { order_id: 'SCP-1042' }, status: 'denied', error: expect.stringMatching(/refused at dispatch/) },
    ]);
    expect(body.stopped).toBe('reply');
    expect(body.reply.text).toMatch(/can't issue that refund/);
  });

  test('then the refusal is recorded as denied with her routing key, and no second refund happened', async () => {
    expect((await records()).at(-1)).toEqual({ tool_id: 'process_refund', status: 'denied', routing_key: 'jane@acme.com' });
    const refunds = await t.sequelize.query('SELECT order_id FROM scoop_refunds', { type: QueryTypes.SELECT });
    expect(refunds).toEqual([{ order_id: 'SCP-1042' }]);
  });
});

describe('when an operator reads the thread', () => {
  test("then it lists the three messages in order, each with its run's key, offer, steps and reply", async () => {
    const res = await t.admin().get(`/api/agents/${sundae}/threads/${thread}`).expect(200);
    expect(res.body).toMatchObject({ id: thread, subject: 'Melted order', message_count: 3, next_after: null });
    expect(
      res.body.messages.map((m: { routing_key: string; tools_offered: string[]; steps: Step[]; stopped: string }) => [
        m.routing_key,
        m.tools_offered.length,
        m.steps.map((s) => `${s.tool}:${s.status}`),
        m.stopped,
      ]),
    ).toEqual([
      ['jane@acme.com', 2, ['lookup_order:success'], 'reply'],
      ['mara@thescoop.com', 3, ['process_refund:success'], 'reply'],
      ['jane@acme.com', 2, ['process_refund:denied'], 'reply'],
    ]);
    expect(res.body.messages[0].reply.text).toMatch(/^Hi Jane,/);
    const list = await t.admin().get(`/api/agents/${sundae}/threads`).expect(200);
    expect(list.body).toEqual([expect.objectContaining({ id: thread, message_count: 3 })]);
  });

  test("then another agent's thread id is a 404, and a client may not read threads", async () => {
    const other = await makeAgent(t, { name: 'Other' });
    await t.admin().get(`/api/agents/${other}/threads/${thread}`).expect(404);
    await t.client().get(`/api/agents/${sundae}/threads/${thread}`).expect(403);
    await write({ from: 'jane@acme.com', body: 'hello' }, 'thr_00000000000000000000000000000000').expect(404);
    const numeric = await write({ from: 'jane@acme.com', body: 'hello' })
      .send({ thread_id: 1, message: { from: 'jane@acme.com', body: 'hello' } })
      .expect(422);
    expect(numeric.body.detail[0]).toMatchObject({ loc: ['body', 'thread_id'], msg: expect.stringMatching(/reference/) });
  });
});
