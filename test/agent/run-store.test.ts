// The run store: a run starts in a new thread (under a new, unguessable reference) or in the thread
// given; a thread knows its participants and the Message-IDs it holds; what the model reads of it is
// its newest runs, each cut in the database; an operator reads it in pages.
import { QueryTypes } from 'sequelize';
import { RunStore } from '../../src/agent/run-store';
import { ThreadStore, type ThreadRef } from '../../src/agent/thread-store';
import { Instances } from '../../src/db/instances';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent } from '../support/factories';

let t: TestApp;
let store: RunStore;
let agent: number;
let other: number;

beforeAll(async () => {
  t = await createTestApp();
  store = new RunStore(t.sequelize, new Instances(t.sequelize, { heartbeatMs: 5_000, staleAfterMs: 30_000 }), new ThreadStore(t.sequelize));
  agent = await makeAgent(t, { name: 'Keeper', toolkit_ids: [] });
  other = await makeAgent(t, { name: 'Other', toolkit_ids: [] });
});

afterAll(() => t.close());

const runIn = (
  thread: ThreadRef | { subject: string | null },
  body: string,
  options: { message_id?: string; participants?: string[]; agent?: number } = {},
) =>
  store.start({
    agent_id: options.agent ?? agent,
    thread,
    run: 'sender',
    message: { from: 'jane@acme.com', body },
    routing_key: 'jane@acme.com',
    tools_offered: [],
    participants: options.participants ?? ['jane@acme.com'],
    message_id: options.message_id ?? null,
    new_thread: null,
  });

test('when a run starts with a new thread, then the thread is made with the subject, a reference of 128 random bits, and its participants', async () => {
  const first = await runIn({ subject: 'Melted order' }, 'one', { participants: ['jane@acme.com', 'omar@example.org'] });
  expect(first.thread?.reference).toMatch(/^thr_[0-9a-f]{32}$/);
  const thread = await store.threads.thread(agent, first.thread!.reference);
  expect(thread).toMatchObject({
    id: first.thread!.reference,
    subject: 'Melted order',
    message_count: 1,
    participants: ['jane@acme.com', 'omar@example.org'],
  });
  const second = await runIn({ subject: 'Melted order' }, 'one');
  expect(second.thread!.reference).not.toBe(first.thread!.reference);
});

test("when another agent names a thread's reference, then it finds nothing", async () => {
  const { thread } = await runIn({ subject: null }, 'mine');
  expect(await store.threads.byReference(agent, thread!.reference)).toMatchObject({ id: thread!.id });
  expect(await store.threads.byReference(other, thread!.reference)).toBeNull();
  await expect(store.threads.thread(other, thread!.reference)).rejects.toMatchObject({ status: 404 });
});

test('when a Message-ID a thread holds is named, then the thread is found by it, and another agent finds nothing', async () => {
  const { thread } = await runIn({ subject: null }, 'with an id', { message_id: '<jane-1@acme.com>' });
  expect(await store.threads.byMessageIds(agent, ['<unknown@x>', '<jane-1@acme.com>'])).toMatchObject({
    thread: { id: thread!.id },
    message_id: '<jane-1@acme.com>',
  });
  expect(await store.threads.byMessageIds(other, ['<jane-1@acme.com>'])).toBeNull();
});

test("when a thread's history is read, then only the newest runs come back, oldest first, each body cut in the database with its length kept", async () => {
  const { thread } = await runIn({ subject: null }, 'one');
  let ref = thread!;
  for (const body of ['two', 'three', 'x'.repeat(5000)]) ref = (await runIn(ref, body)).thread!;
  const history = await store.history(ref, { messages: 2, messageChars: 100 });
  expect(history.map((r) => (r.message as { body: string }).body)).toEqual(['three', 'x'.repeat(100)]);
  expect(history[1]!.message).toMatchObject({ original_length: 5000 });
});

test('when a run of someone who is not a participant sits in an old thread, then the history leaves it out', async () => {
  const { thread } = await runIn({ subject: null }, 'mine');
  await t.sequelize.query(
    `INSERT INTO agent_runs (agent_id, thread_id, run, message, routing_key, tools_offered) VALUES (:agent, :thread, 'sender', '{"from":"x@evil.example","body":"SCP-1050"}', 'x@evil.example', '{}')`,
    { replacements: { agent, thread: thread!.id } },
  );
  const history = await store.history(thread!, { messages: 20, messageChars: 1000 });
  expect(history.map((r) => r.routing_key)).toEqual(['jane@acme.com']);
});

test('when an operator reads a thread in pages, then each page is oldest first and the cursor reads on to the end', async () => {
  const { thread } = await runIn({ subject: null }, 'p1');
  let ref = thread!;
  for (const body of ['p2', 'p3', 'p4', 'p5']) ref = (await runIn(ref, body)).thread!;
  const bodies = (page: { messages: { message: unknown }[] }) => page.messages.map((r) => (r.message as { body: string }).body);
  const first = await store.threadPage(ref.id, { after: 0, limit: 2 });
  expect(bodies(first)).toEqual(['p1', 'p2']);
  const second = await store.threadPage(ref.id, { after: first.next_after!, limit: 2 });
  expect(bodies(second)).toEqual(['p3', 'p4']);
  const last = await store.threadPage(ref.id, { after: second.next_after!, limit: 2 });
  expect(bodies(last)).toEqual(['p5']);
  expect(last.next_after).toBeNull();
});

test('when a run cannot be written, then no empty thread is left behind', async () => {
  const threads = async () => (await t.sequelize.query('SELECT id FROM threads', { type: QueryTypes.SELECT })).length;
  const before = await threads();
  // A sender run must carry a thread, and a scheduled run must not: this one breaks that rule.
  await expect(
    store.start({
      agent_id: agent,
      thread: { subject: 'x' },
      run: 'scheduled',
      message: { instruction: 'x' },
      routing_key: null,
      tools_offered: [],
      participants: [],
      message_id: null,
      new_thread: null,
    }),
  ).rejects.toThrow();
  expect(await threads()).toBe(before);
});
