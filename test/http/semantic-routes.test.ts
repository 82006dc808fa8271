// Semantic search over HTTP, with an embeddings provider (a local server speaking the protocol):
// search and ask find a passage by meaning, say which lists took part, answer 200 with the provider
// down, and stay gated by document_search; the admin routes show the embedding state and start the
// re-embedding job.
import { OpenAIEmbeddings } from '../../src/llm/openai-embeddings';
import { createTestApp, type TestApp } from '../support/app';
import { startFakeEmbeddings, type FakeEmbeddings } from '../support/fake-embeddings';
import { makeAgent } from '../support/factories';

let t: TestApp;
let fake: FakeEmbeddings;
let agent: number;
let ungated: number;

const REFUNDS = 'Refunds are issued within 14 days of the return reaching us.';
const HOURS = 'The Riverside shop opens at nine and closes at six.';

beforeAll(async () => {
  fake = await startFakeEmbeddings();
  const embeddings = new OpenAIEmbeddings({
    apiKey: 'sk-test',
    baseURL: fake.baseURL,
    model: 'fake-embed',
    dimensions: 256,
    maxRetries: 0,
  });
  t = await createTestApp({ embeddings });
  agent = await makeAgent(t, { name: 'Sundae', enabled_tools: 'document_search' });
  ungated = await makeAgent(t, { name: 'Plain', enabled_tools: 'email_analyzer' });
  for (const [title, content] of [
    ['Refunds', REFUNDS],
    ['Hours', HOURS],
  ])
    await t.client().post(`/api/agents/${agent}/documents`).send({ title, content }).expect(201);
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
afterEach(() => {
  fake.down = false;
});

test('when a question shares no word with the passage, then search finds it by meaning and says semantic search was used', async () => {
  const res = await t.client().post(`/api/agents/${agent}/documents/search`).send({ query: 'Can I get my money back?' }).expect(200);
  expect(res.body.retrieval).toEqual({ semantic: 'used' });
  expect(res.body.results[0]).toMatchObject({ title: 'Refunds', found_by: ['semantic'], chunk_id: expect.any(Number) });
});

test('when the embeddings provider is down, then search answers 200 with the lexical results, marked unavailable', async () => {
  fake.down = true;
  const res = await t.client().post(`/api/agents/${agent}/documents/search`).send({ query: 'When does the shop close?' }).expect(200);
  expect(res.body.retrieval).toMatchObject({ semantic: 'unavailable', note: expect.stringMatching(/words only/) });
  expect(res.body.results.map((r: { title: string; found_by: string[] }) => [r.title, r.found_by])).toEqual([['Hours', ['lexical']]]);
});

test('when the provider is down at upload, then the upload is a 201 and the job embeds the document once the provider is back', async () => {
  fake.down = true;
  await t.client().post(`/api/agents/${agent}/documents`).send({ title: 'Allergens', content: 'Pistachio holds nuts.' }).expect(201);
  const before = await t.admin().get('/api/embeddings').expect(200);
  expect(before.body).toMatchObject({ model: 'fake-embed', dimensions: 256, pending: 1, engine: expect.stringMatching(/exact|pgvector/) });
  fake.down = false;
  const started = await t.admin().post('/api/embeddings/reindex').expect(202);
  expect(started.body.job).toMatchObject({ running: expect.any(Boolean) });
  const deadline = Date.now() + 5_000;
  let state = started.body;
  while ((state.pending > 0 || state.job.running) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    state = (await t.admin().get('/api/embeddings').expect(200)).body;
  }
  expect(state).toMatchObject({ pending: 0, embedded: state.total, job: { running: false, last: { embedded: 1, error: null } } });
});

test('when a client asks the embeddings routes, then it is refused: they are the admin role’s', async () => {
  await t.client().get('/api/embeddings').expect(403);
  await t.client().post('/api/embeddings/reindex').expect(403);
});

test('when the agent is not offered document_search, then search and ask are refused as before, whatever the embeddings', async () => {
  const search = await t.client().post(`/api/agents/${ungated}/documents/search`).send({ query: 'money back' }).expect(403);
  expect(search.body.code).toBe('tool_forbidden');
  await t.client().post(`/api/agents/${ungated}/documents/ask`).send({ question: 'money back?' }).expect(403);
  expect(fake.inputs).not.toContain('money back');
});

test('when the local model answers from a passage found by meaning, then its sources name that chunk', async () => {
  const res = await t
    .client()
    .post(`/api/agents/${agent}/documents/ask`)
    .send({ question: 'How long until refunds are issued?', top_k: 1 })
    .expect(200);
  expect(res.body).toMatchObject({ answered: true, retrieval: { semantic: 'used' } });
  expect(res.body.sources.map((s: { title: string }) => s.title)).toEqual(['Refunds']);
});

test('when no embeddings are configured, then the embeddings routes answer 404 saying search goes by words only', async () => {
  const plain = await createTestApp();
  try {
    const res = await plain.admin().get('/api/embeddings').expect(404);
    expect(res.body.detail).toBe(
      'Semantic search was not found: no embeddings provider is configured, so search goes by words only; configure one (the service: TOOLGATE_MODEL_PROVIDER=openai; a host: createToolgate({ embeddings })).',
    );
  } finally {
    await plain.close();
  }
});

test('when an agent run asks a question, then document_search is offered and dispatched as before, and finds the passage by meaning', async () => {
  const res = await t
    .client()
    .post(`/api/agents/${agent}/messages`)
    .send({ message: { from: 'jane@acme.com', subject: 'Refunds', body: 'Can I get my money back?' } })
    .expect(200);
  expect(res.body.tools_offered).toContain('document_search');
  const step = res.body.steps.find((s: { tool: string }) => s.tool === 'document_search');
  expect(step).toMatchObject({ status: 'success', output: { retrieval: { semantic: 'used' } } });
  expect(step.output.results[0]).toMatchObject({ title: 'Refunds', found_by: ['semantic'] });
});

test('when an agent run is not offered document_search, then the tool is neither offered nor run', async () => {
  const res = await t
    .client()
    .post(`/api/agents/${ungated}/messages`)
    .send({ message: { from: 'jane@acme.com', subject: 'Refunds', body: 'Can I get my money back?' } })
    .expect(200);
  expect(res.body.tools_offered).not.toContain('document_search');
  expect(res.body.steps.filter((s: { tool: string; status: string }) => s.tool === 'document_search' && s.status === 'success')).toEqual(
    [],
  );
});
