// The builtin tools called by name (POST /tool-calls, and an agent run's model): each a zod input
// and the same work as the legacy routes' stages, checked and recorded by the one dispatch path.
import { QueryTypes } from 'sequelize';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;
let agent: number;

beforeAll(async () => {
  t = await createTestApp();
  const defaults = (await t.admin().get('/api/toolkits').expect(200)).body.find(
    (k: { system_key: string }) => k.system_key === 'default_tools',
  ).id;
  agent = await makeAgent(t, { name: 'Desk', toolkit_ids: [defaults] });
  await t
    .client()
    .post(`/api/agents/${agent}/documents`)
    .send({ title: 'Refunds', content: 'Melted pints are refunded in full within two days.' })
    .expect(201);
});

afterAll(() => t.close());

/** The agent's tool-call records in the order they were written (a call's `started` row comes first). */
const recordsOf = (agentId: number) =>
  t.sequelize.query<{ tool_id: string; status: string }>('SELECT tool_id, status FROM tool_calls WHERE agent_id = :agentId ORDER BY id', {
    replacements: { agentId },
    type: QueryTypes.SELECT,
  });

const call = (tool: string, input: unknown) =>
  t.client().post(`/api/agents/${agent}/tool-calls`).send({ tool, input, sender: 'jane@acme.com' });

test('when task_creator is called by name in two runs with no message, then each run files its own task', async () => {
  const first = await call('task_creator', { title: 'Restock vanilla', due: '2026-12-04' }).expect(200);
  expect(first.body).toMatchObject({
    tool: 'task_creator',
    status: 'success',
    output: { title: 'Restock vanilla', due: '2026-12-04', status: 'pending' },
  });
  const next = await call('task_creator', { title: 'Restock vanilla' }).expect(200);
  expect(next.body.output.title).toBe('Restock vanilla');
  expect(next.body.output.id).not.toBe(first.body.output.id);
});

test("when document_search is called by name, then it answers from the agent's documents", async () => {
  const res = await call('document_search', { query: 'melted refund' }).expect(200);
  expect(res.body.output.results[0]).toMatchObject({ title: 'Refunds', chunk_index: 0 });
});

test('when email_analyzer and reply_generator are called by name, then they analyze and answer the text given', async () => {
  const analysis = await call('email_analyzer', {
    from: 'Jane <jane@acme.com>',
    body: 'My order arrived melted. Please refund it by Friday.',
  }).expect(200);
  expect(analysis.body.output).toMatchObject({ category: expect.any(String), suggested_reply: expect.stringMatching(/Hi Jane/) });
  const reply = await call('reply_generator', { from: 'Jane <jane@acme.com>', body: 'My order arrived melted.' }).expect(200);
  expect(reply.body.output.text).toMatch(/Desk/);
});

test('when reply_generator is called, then the analysis it stands on is asked of the run and recorded as its own call', async () => {
  const before = await recordsOf(agent);
  await call('reply_generator', { from: 'Jane <jane@acme.com>', body: 'Where is my order?' }).expect(200);
  expect((await recordsOf(agent)).slice(before.length)).toEqual([
    { tool_id: 'reply_generator', status: 'success' },
    { tool_id: 'email_analyzer', status: 'success' },
  ]);
});

test('when reply_generator is offered but email_analyzer is not, then it fails and the analysis is refused and recorded denied', async () => {
  const replies = await makeToolkit(t, 'Replies only', ['reply_generator']);
  const writer = await makeAgent(t, { name: 'Writer', toolkit_ids: [replies] });
  const res = await t
    .client()
    .post(`/api/agents/${writer}/tool-calls`)
    .send({ tool: 'reply_generator', input: { body: 'Refund me.' }, sender: 'jane@acme.com' })
    .expect(200);
  expect(res.body).toMatchObject({ tool: 'reply_generator', status: 'failure', error: expect.stringMatching(/email_analyzer/) });
  expect(await recordsOf(writer)).toEqual([
    { tool_id: 'reply_generator', status: 'failure' },
    { tool_id: 'email_analyzer', status: 'denied' },
  ]);
});

test("when a builtin's input does not fit, then it is a 422 naming the field under input, and nothing runs", async () => {
  const res = await call('task_creator', { title: '' }).expect(422);
  expect(res.body.detail[0].loc).toEqual(['body', 'input', 'title']);
});

test('when a dispatch names its sender `from` instead of `sender`, then it is a 422 naming `from`, and nothing runs', async () => {
  const before = (await recordsOf(agent)).length;
  const res = await t
    .client()
    .post(`/api/agents/${agent}/tool-calls`)
    .send({ tool: 'task_creator', input: { title: 'x' }, from: 'jane@acme.com' })
    .expect(422);
  expect(JSON.stringify(res.body.detail)).toContain('from');
  expect((await recordsOf(agent)).length).toBe(before);
});
