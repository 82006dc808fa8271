// The builtin tools called by name (POST /tool-calls, and an agent run's model): each a zod input
// and the same work as the legacy routes' stages, checked and recorded by the one dispatch path.
import { createTestApp, type TestApp } from '../support/app';

let t: TestApp;
let agent: number;

beforeAll(async () => {
  t = await createTestApp();
  const defaults = (await t.admin().get('/api/toolkits').expect(200)).body.find((k: { system_key: string }) => k.system_key === 'default_tools').id;
  agent = (await t.admin().post('/api/agents').send({ name: 'Desk', toolkit_ids: [defaults] }).expect(201)).body.id;
  await t.client().post(`/api/agents/${agent}/documents`).send({ title: 'Refunds', content: 'Melted pints are refunded in full within two days.' }).expect(201);
});

afterAll(() => t.close());

const call = (tool: string, input: unknown) => t.client().post(`/api/agents/${agent}/tool-calls`).send({ tool, input, sender: 'jane@acme.com' });

test('when task_creator is called by name, then it files the task once, however often it is called', async () => {
  const first = await call('task_creator', { title: 'Refund SCP-1042', due: '2026-12-04' }).expect(200);
  expect(first.body).toMatchObject({ tool: 'task_creator', status: 'success', output: { title: 'Refund SCP-1042', due: '2026-12-04', status: 'pending' } });
  const again = await call('task_creator', { title: 'Refund SCP-1042' }).expect(200);
  expect(again.body.output.id).toBe(first.body.output.id);
});

test('when document_search is called by name, then it answers from the agent\'s documents', async () => {
  const res = await call('document_search', { query: 'melted refund' }).expect(200);
  expect(res.body.output.results[0]).toMatchObject({ title: 'Refunds', chunk_index: 0 });
});

test('when email_analyzer and reply_generator are called by name, then they analyze and answer the text given', async () => {
  const analysis = await call('email_analyzer', { from: 'Jane <jane@acme.com>', body: 'My order arrived melted. Please refund it by Friday.' }).expect(200);
  expect(analysis.body.output).toMatchObject({ category: expect.any(String), suggested_reply: expect.stringMatching(/Hi Jane/) });
  const reply = await call('reply_generator', { from: 'Jane <jane@acme.com>', body: 'My order arrived melted.' }).expect(200);
  expect(reply.body.output.text).toMatch(/Desk/);
});

test('when a builtin\'s input does not fit, then it is a 422 naming the field under input, and nothing runs', async () => {
  const res = await call('task_creator', { title: '' }).expect(422);
  expect(res.body.detail[0].loc).toEqual(['body', 'input', 'title']);
});
