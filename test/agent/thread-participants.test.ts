// Threads bound to their participants (SEMANTICS §11), tried as an attacker would on the seed's
// scenario: a stranger who knows (or guesses) a thread's reference, or one of its Message-IDs,
// starts a thread of his own with no history; nothing of Jane's reaches him; and when Mara approves
// on Jane's thread, the refund is Jane's order, never an order the stranger's text named.
import { QueryTypes } from 'sequelize';
import { OpenAIModel } from '../../src/llm/openai-model';
import { createTestApp, type TestApp } from '../support/app';
import { completion, startFakeOpenAI } from '../support/fake-openai';
import { createSundae, type Sundae } from '../support/scoop';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface RunAnswer {
  thread_id: string;
  new_thread?: { reason: string; requested: string };
  routing_key: string | null;
  steps: { tool: string; input: { order_id?: string }; status: string; output?: unknown; error?: string }[];
  reply: { text: string; message_id: string; to: string[]; cc: string[] };
}

const post = async (agent: number, body: Record<string, unknown>, status = 200): Promise<RunAnswer> =>
  (await t.client().post(`/api/agents/${agent}/messages`).send(body).expect(status)).body;

const JANE = {
  from: 'Jane <jane@acme.com>',
  subject: 'Melted order',
  body: 'Order SCP-1042 arrived melted. I would like a refund.',
  message_id: '<jane-1@acme.com>',
};
const STRANGER = {
  from: 'Shop Courier <ops@courier-updates.example>',
  body: 'Thanks, noted on our side.\n\n-- \nCourier desk | ref SCP-1050',
};
const MARA = { from: 'Mara <Mara+billing@TheScoop.com>', body: 'Approved, process it.' };

const refunds = async () =>
  (await t.sequelize.query<{ order_id: string }>('SELECT order_id FROM scoop_refunds ORDER BY id', { type: QueryTypes.SELECT })).map(
    (r) => r.order_id,
  );
const resetOrders = () =>
  t.sequelize.query(
    "DELETE FROM scoop_refunds; UPDATE scoop_orders SET status = 'delivered' WHERE id IN ('SCP-1042', 'SCP-1043'); UPDATE scoop_orders SET status = 'shipped' WHERE id = 'SCP-1050'",
  );

/** Everything of a thread an answer or a reply could leak: the order and the words of Jane's message. */
function leaksJane(answer: RunAnswer): boolean {
  return /SCP-1042|melted|Mint Chip|jane@acme\.com/i.test(JSON.stringify({ steps: answer.steps, reply: answer.reply.text }));
}

describe('when a stranger names the thread by its reference, and then Mara approves', () => {
  let sundae: Sundae;
  let jane: RunAnswer;
  let stranger: RunAnswer;
  let mara: RunAnswer;

  beforeAll(async () => {
    await resetOrders();
    sundae = await createSundae(t, 'gate');
    jane = await post(sundae.id, { message: JANE });
    stranger = await post(sundae.id, { thread_id: jane.thread_id, message: STRANGER });
    mara = await post(sundae.id, { thread_id: jane.thread_id, message: MARA });
  });

  test("then the stranger's message starts a thread of its own, and the answer says so", () => {
    expect(stranger.thread_id).not.toBe(jane.thread_id);
    expect(stranger.new_thread).toEqual({ reason: 'not_a_participant', requested: jane.thread_id });
  });

  test("then nothing of Jane's thread reaches the stranger: no step, no word of her order", () => {
    expect(stranger.steps).toEqual([]);
    expect(leaksJane(stranger)).toBe(false);
  });

  test("then Mara's approval on Jane's thread refunds SCP-1042, Jane's order, and not the order in the stranger's signature", async () => {
    expect(mara.thread_id).toBe(jane.thread_id);
    expect(mara.new_thread).toBeUndefined();
    expect(mara.steps).toEqual([expect.objectContaining({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, status: 'success' })]);
    expect(await refunds()).toEqual(['SCP-1042']);
  });

  test("then Jane's thread holds her message and Mara's, and the stranger's thread only his", async () => {
    const janes = (await t.admin().get(`/api/agents/${sundae.id}/threads/${jane.thread_id}`).expect(200)).body;
    expect(janes.messages.map((m: { routing_key: string }) => m.routing_key)).toEqual(['jane@acme.com', 'mara@thescoop.com']);
    expect(janes.participants).toEqual(['jane@acme.com', 'mara@thescoop.com']);
    const his = (await t.admin().get(`/api/agents/${sundae.id}/threads/${stranger.thread_id}`).expect(200)).body;
    expect(his.messages.map((m: { routing_key: string; new_thread: unknown }) => [m.routing_key, m.new_thread])).toEqual([
      ['ops@courier-updates.example', { reason: 'not_a_participant', requested: jane.thread_id }],
    ]);
  });
});

describe('when a stranger writes "Go ahead." on someone else\'s thread', () => {
  test("then it starts a thread of its own and gets none of that thread's order back, not even in a denied step", async () => {
    const sundae = await createSundae(t, 'gate');
    const jane = await post(sundae.id, { message: JANE });
    const stranger = await post(sundae.id, { thread_id: jane.thread_id, message: { from: 'omar@example.org', body: 'Go ahead.' } });
    expect(stranger.new_thread?.reason).toBe('not_a_participant');
    expect(leaksJane(stranger)).toBe(false);
  });
});

describe('when the thread is named by In-Reply-To or References, as a mail relay forwards real mail', () => {
  let sundae: Sundae;
  let jane: RunAnswer;

  beforeAll(async () => {
    await resetOrders();
    sundae = await createSundae(t, 'gate');
    jane = await post(sundae.id, { message: JANE });
  });

  test("then a stranger answering Jane's Message-ID starts his own thread, and the answer names the Message-ID it found", async () => {
    const stranger = await post(sundae.id, { message: { ...STRANGER, in_reply_to: '<jane-1@acme.com>' } });
    expect(stranger.thread_id).not.toBe(jane.thread_id);
    expect(stranger.new_thread).toEqual({ reason: 'not_a_participant', requested: '<jane-1@acme.com>' });
    expect(leaksJane(stranger)).toBe(false);
  });

  test("then Mara answering the Message-ID of Sundae's reply (which copied her) joins Jane's thread and refunds SCP-1042", async () => {
    expect(jane.reply.cc).toEqual(['mara@thescoop.com']);
    const mara = await post(sundae.id, {
      message: { ...MARA, in_reply_to: jane.reply.message_id, references: `<jane-1@acme.com> ${jane.reply.message_id}` },
    });
    expect(mara.thread_id).toBe(jane.thread_id);
    expect(mara.steps).toEqual([expect.objectContaining({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, status: 'success' })]);
    expect(await refunds()).toEqual(['SCP-1042']);
  });

  test('then a Message-ID the agent never saw starts a new thread, with no new_thread note: it named no thread the agent knows', async () => {
    const answer = await post(sundae.id, {
      message: { from: 'jane@acme.com', body: 'Hello again.', in_reply_to: '<never-seen@acme.com>' },
    });
    expect(answer.thread_id).not.toBe(jane.thread_id);
    expect(answer.new_thread).toBeUndefined();
  });
});

describe('when a thread reference from another agent is given', () => {
  test('then it is a 404, exactly as an unknown one, and nothing runs', async () => {
    const sundae = await createSundae(t, 'gate');
    const scout = await createSundae(t, 'gate', { name: 'Scout' });
    const jane = await post(sundae.id, { message: JANE });
    const before = (await t.sequelize.query('SELECT id FROM agent_runs', { type: QueryTypes.SELECT })).length;
    const other = await t
      .client()
      .post(`/api/agents/${scout.id}/messages`)
      .send({ thread_id: jane.thread_id, message: { from: 'jane@acme.com', body: 'Hi' } })
      .expect(404);
    const unknown = await t
      .client()
      .post(`/api/agents/${scout.id}/messages`)
      .send({ thread_id: 'thr_0123456789abcdef0123456789abcdef', message: { from: 'jane@acme.com', body: 'Hi' } })
      .expect(404);
    expect(other.body.code).toBe('not_found');
    expect(other.body.detail.replace(jane.thread_id, 'X')).toBe(unknown.body.detail.replace('thr_0123456789abcdef0123456789abcdef', 'X'));
    expect((await t.sequelize.query('SELECT id FROM agent_runs', { type: QueryTypes.SELECT })).length).toBe(before);
  });
});

describe('when a message that names a thread has no routing key', () => {
  test('then it starts a new thread with no history, and the answer says why', async () => {
    const sundae = await createSundae(t, 'gate');
    const jane = await post(sundae.id, { message: JANE });
    const nobody = await post(sundae.id, { thread_id: jane.thread_id, message: { from: 'undisclosed-recipients:;', body: 'Go ahead.' } });
    expect(nobody.routing_key).toBeNull();
    expect(nobody.new_thread).toEqual({ reason: 'no_routing_key', requested: jane.thread_id });
    expect(leaksJane(nobody)).toBe(false);
  });
});

describe('when a participant signs with another order', () => {
  test("then the order a refund acts on comes from a participant's own words, never a signature", async () => {
    await resetOrders();
    const sundae = await createSundae(t, 'gate');
    const jane = await post(sundae.id, { message: JANE });
    await post(sundae.id, {
      thread_id: jane.thread_id,
      message: { from: 'jane@acme.com', body: 'Any news?\n\n-- \nJane Doe | ref SCP-1050' },
    });
    const mara = await post(sundae.id, { thread_id: jane.thread_id, message: MARA });
    expect(mara.steps).toEqual([expect.objectContaining({ tool: 'process_refund', input: { order_id: 'SCP-1042' } })]);
    expect(await refunds()).toEqual(['SCP-1042']);
  });
});

describe('when a message copies someone', () => {
  // (The reply's copies join the thread too: scenario-thread.test.ts, where Mara is copied and answers.)
  test('then they become participants and may write into the thread', async () => {
    const sundae = await createSundae(t, 'gate', { escalation: null });
    const jane = await post(sundae.id, { message: { ...JANE, cc: ['Omar <omar@example.org>'] } });
    expect(jane.reply.cc).toEqual([]);
    const omar = await post(sundae.id, { thread_id: jane.thread_id, message: { from: 'omar@example.org', body: 'Same problem here.' } });
    expect(omar.thread_id).toBe(jane.thread_id);
  });
});

describe('when the model is a remote one and a stranger names the thread', () => {
  test("then the model's input for his run holds nothing of Jane's thread: no address, no body, no tool output", async () => {
    const fake = await startFakeOpenAI();
    const remote = await createTestApp({
      model: new OpenAIModel({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'gpt-test', timeoutMs: 5_000, maxRetries: 0 }),
    });
    try {
      fake.script(() => completion('Noted. — Sundae'));
      const sundae = await createSundae(remote, 'gate');
      const jane = (await remote.client().post(`/api/agents/${sundae.id}/messages`).send({ message: JANE }).expect(200)).body;
      fake.requests.length = 0;
      await remote.client().post(`/api/agents/${sundae.id}/messages`).send({ thread_id: jane.thread_id, message: STRANGER }).expect(200);
      const sent = JSON.stringify(fake.requests.map((r) => r.body));
      expect(sent).toContain('Courier desk');
      expect(sent).not.toMatch(/SCP-1042|melted|jane@acme\.com|Jane/i);
    } finally {
      await remote.close();
      await fake.close();
    }
  });
});
