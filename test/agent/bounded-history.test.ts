// What one message costs, whatever its thread holds (SEMANTICS §11): a thread of 30 messages of
// 500 KB each (and replies as long), then a 12-byte message. The model's input for that run stays
// under the history bound, and an operator reads the thread in pages of about a million characters.
import { OpenAIModel } from '../../src/llm/openai-model';
import { createTestApp, type TestApp } from '../support/app';
import { completion, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { createSundae, type Sundae } from '../support/scoop';

const MESSAGES = 30;
const BIG = 500_000;
const HISTORY_CHARS = 32_000;

let fake: FakeOpenAI;
let t: TestApp;
let sundae: Sundae;
let thread: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.script(() => completion('Noted. — Sundae'));
  t = await createTestApp({
    model: new OpenAIModel({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'gpt-test', timeoutMs: 10_000, maxRetries: 0 }),
    agentRuns: { historyChars: HISTORY_CHARS },
    bodyLimit: '2mb',
  });
  sundae = await createSundae(t, 'gate');
  const text = (i: number) => `Message ${i}. ${'The pint was soft and the lid was loose. '.repeat(BIG / 40)}`.slice(0, BIG);
  thread = (
    await t
      .client()
      .post(`/api/agents/${sundae.id}/messages`)
      .send({ message: { from: 'jane@acme.com', subject: 'Long', body: text(0) } })
      .expect(200)
  ).body.thread_id;
  // The other 29, written as the run store writes them (posting 15 MB through a model is not the point).
  await t.sequelize.query(
    `INSERT INTO agent_runs (agent_id, thread_id, run, message, routing_key, tools_offered, reply, stopped, completed_at)
     SELECT :agent, t.id, 'sender', jsonb_build_object('from', 'jane@acme.com', 'body', 'Message ' || n || '. ' || repeat('The pint was soft and the lid was loose. ', :reps)),
            'jane@acme.com', '{}', repeat('We are sorry about the pint. ', :replyReps), 'reply', now()
       FROM threads t, generate_series(1, :more) AS n WHERE t.reference = :thread`,
    { replacements: { agent: sundae.id, thread, reps: Math.floor(BIG / 40), replyReps: Math.floor(BIG / 29), more: MESSAGES - 1 } },
  );
  fake.requests.length = 0;
  await t
    .client()
    .post(`/api/agents/${sundae.id}/messages`)
    .send({ thread_id: thread, message: { from: 'jane@acme.com', body: 'Any update?!' } })
    .expect(200);
});

afterAll(async () => {
  await t.close();
  await fake.close();
});

test("when the thread holds 30 messages of 500 KB, then the next run's model input stays under the history bound", () => {
  expect(fake.requests).toHaveLength(1);
  const input = JSON.stringify(fake.requests[0]!.body);
  // The history bound, plus the system prompt, the tools' schemas and the message at hand.
  expect(input.length).toBeLessThan(HISTORY_CHARS + 12_000);
  // It still reads the latest messages, each cut with a note of how much was left out.
  expect(input).toContain(`Message ${MESSAGES - 1}.`);
  expect(input).toMatch(/more characters not shown/);
  expect(input).toContain('Any update?!');
});

test('when an operator reads the thread, then each page stays near a million characters and the pages read on to the end', async () => {
  const seen: number[] = [];
  let after: number | null | undefined;
  let pages = 0;
  while (after !== null) {
    const res = await t
      .admin()
      .get(`/api/agents/${sundae.id}/threads/${thread}`)
      .query({ limit: 100, ...(after ? { after } : {}) })
      .expect(200);
    expect(res.text.length).toBeLessThan(2 * BIG + 200_000);
    seen.push(...res.body.messages.map((m: { id: number }) => m.id));
    after = res.body.next_after;
    pages += 1;
  }
  expect(seen).toHaveLength(MESSAGES + 1);
  expect(new Set(seen).size).toBe(MESSAGES + 1);
  expect(pages).toBeGreaterThan(10);
});

test("when an operator lists the agent's runs, then the page is bounded the same way and the Link header names the next", async () => {
  const res = await t.admin().get(`/api/agents/${sundae.id}/runs`).query({ limit: 500 }).expect(200);
  expect(res.text.length).toBeLessThan(2 * BIG + 200_000);
  expect(res.headers.link).toMatch(/<[^>]*\/runs\?limit=500&before=\d+>; rel="next"/);
});
