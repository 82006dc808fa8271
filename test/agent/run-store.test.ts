// The run store: a run starts in a new thread or in the thread given, and a thread's history can be
// read whole (the operator's view) or as its newest runs only (what the model reads).
import { QueryTypes } from 'sequelize';
import { RunStore } from '../../src/agent/run-store';
import { createTestApp, type TestApp } from '../support/app';

let t: TestApp;
let store: RunStore;
let agent: number;

beforeAll(async () => {
  t = await createTestApp();
  store = new RunStore(t.sequelize);
  agent = (await t.admin().post('/api/agents').send({ name: 'Keeper', toolkit_ids: [] }).expect(201)).body.id;
});

afterAll(() => t.close());

const runIn = (thread: number | { subject: string | null }, body: string) =>
  store.start({ agent_id: agent, thread, run: 'sender', message: { from: 'jane@acme.com', body }, routing_key: 'jane@acme.com', tools_offered: [] });

test('when a run starts with a new thread, then the thread is made with the subject and the run is in it', async () => {
  const first = await runIn({ subject: 'Melted order' }, 'one');
  expect(first.thread_id).not.toBeNull();
  expect(await store.thread(agent, first.thread_id!)).toMatchObject({ subject: 'Melted order', message_count: 1 });
});

test('when a thread\'s runs are read with a bound, then only the newest that many come back, oldest first', async () => {
  const { thread_id } = await runIn({ subject: null }, 'one');
  for (const body of ['two', 'three', 'four']) await runIn(thread_id!, body);
  const bodies = (runs: { message: unknown }[]) => runs.map((r) => (r.message as { body: string }).body);
  expect(bodies(await store.threadRuns(thread_id!))).toEqual(['one', 'two', 'three', 'four']);
  expect(bodies(await store.threadRuns(thread_id!, 2))).toEqual(['three', 'four']);
});

test('when a run cannot be written, then no empty thread is left behind', async () => {
  const threads = async () => (await t.sequelize.query('SELECT id FROM threads', { type: QueryTypes.SELECT })).length;
  const before = await threads();
  // A sender run must carry a thread, and a scheduled run must not: this one breaks that rule.
  await expect(store.start({ agent_id: agent, thread: { subject: 'x' }, run: 'scheduled', message: { instruction: 'x' }, routing_key: null, tools_offered: [] })).rejects.toThrow();
  expect(await threads()).toBe(before);
});
