// Documents over HTTP: upload, list, delete; search and ask over the committed corpus, gated by
// document_search; bounds and empty cases that answer rather than fail.
import { loadCorpus } from '../fixtures/corpus/load';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent } from '../support/factories';

let t: TestApp;
let agent: number;
let empty: number;
const ids = new Map<string, number>();

beforeAll(async () => {
  t = await createTestApp();
  agent = await makeAgent(t, { name: 'Sundae', enabled_tools: 'document_search' });
  empty = await makeAgent(t, { name: 'Empty', enabled_tools: 'document_search' });
  for (const doc of loadCorpus()) {
    const res = await t.client().post(`/api/agents/${agent}/documents`).send({ title: doc.title, content: doc.content }).expect(201);
    expect(res.body).toEqual({ id: expect.any(Number), title: doc.title, chunk_count: expect.any(Number), created_at: expect.any(String) });
    ids.set(doc.slug, res.body.id);
  }
});
afterAll(() => t.close());

const QUESTIONS: [string, string][] = [
  ['Can I get my money back if my order arrived melted?', 'refund-policy'],
  ['Does the pistachio ice cream contain nuts?', 'allergen-information'],
  ['What time do you open on Sunday?', 'store-hours'],
  ['How many points do I earn in the Scoop Club?', 'loyalty-program'],
];

describe('when a client searches the corpus', () => {
  test.each(QUESTIONS)('then "%s" ranks %s first', async (query, slug) => {
    const res = await t.client().post(`/api/agents/${agent}/documents/search`).send({ query }).expect(200);
    expect(res.body.results[0].document_id).toBe(ids.get(slug));
    expect(Object.keys(res.body.results[0]).sort()).toEqual([
      'chunk_id',
      'chunk_index',
      'document_id',
      'found_by',
      'score',
      'snippet',
      'title',
    ]);
    expect(res.body.retrieval).toEqual({ semantic: 'off' });
  });

  test('then top_k bounds the results, and a top_k out of range is a 422', async () => {
    const res = await t.client().post(`/api/agents/${agent}/documents/search`).send({ query: 'ice cream', top_k: 2 }).expect(200);
    expect(res.body.results).toHaveLength(2);
    const wide = await t.client().post(`/api/agents/${agent}/documents/search`).send({ query: 'ice cream', top_k: 50 }).expect(200);
    expect(wide.body.results.length).toBeGreaterThan(2);
    await t.client().post(`/api/agents/${agent}/documents/search`).send({ query: 'ice cream', top_k: 0 }).expect(422);
    await t.client().post(`/api/agents/${agent}/documents/search`).send({ query: 'ice cream', top_k: 1000 }).expect(422);
  });

  test('then an empty corpus gives an empty result, not an error', async () => {
    const res = await t.client().post(`/api/agents/${empty}/documents/search`).send({ query: 'refund' }).expect(200);
    expect(res.body.results).toEqual([]);
  });
});

describe('when a client asks a question', () => {
  test('then the answer comes from the top chunks, returned as sources', async () => {
    const res = await t
      .client()
      .post(`/api/agents/${agent}/documents/ask`)
      .send({ question: 'Can I get my money back if my order arrived melted?', top_k: 3 })
      .expect(200);
    expect(res.body.sources[0].document_id).toBe(ids.get('refund-policy'));
    const corpus = loadCorpus()
      .map((d) => d.content)
      .join('\n');
    for (const line of res.body.answer.split('\n').filter(Boolean)) expect(corpus).toContain(line);
  });

  test('then an empty corpus answers that the documents do not say', async () => {
    const res = await t.client().post(`/api/agents/${empty}/documents/ask`).send({ question: 'refund?' }).expect(200);
    expect(res.body).toMatchObject({ sources: [], answer: expect.any(String) });
  });
});

describe('when documents are managed', () => {
  test('then an unknown or foreign document is a 404 on delete', async () => {
    await t.client().delete(`/api/agents/${agent}/documents/999999`).expect(404);
    await t
      .client()
      .delete(`/api/agents/${empty}/documents/${ids.get('gift-cards')}`)
      .expect(404);
  });

  test('then a deleted document is no longer listed nor found', async () => {
    await t
      .client()
      .delete(`/api/agents/${agent}/documents/${ids.get('gift-cards')}`)
      .expect(204);
    const list = await t.client().get(`/api/agents/${agent}/documents`).expect(200);
    expect(list.body.map((d: { id: number }) => d.id)).not.toContain(ids.get('gift-cards'));
    const res = await t.client().post(`/api/agents/${agent}/documents/search`).send({ query: 'gift card balance' }).expect(200);
    expect(res.body.results.map((r: { document_id: number }) => r.document_id)).not.toContain(ids.get('gift-cards'));
  });

  test('then an upload without a title or content is a 422, and for an unknown agent a 404', async () => {
    await t.client().post(`/api/agents/${agent}/documents`).send({ content: 'x' }).expect(422);
    await t.client().post(`/api/agents/${agent}/documents`).send({ title: 'x', content: '' }).expect(422);
    await t.client().post('/api/agents/987654/documents').send({ title: 'x', content: 'y' }).expect(404);
    await t.client().get('/api/agents/987654/documents').expect(404);
  });

  test('then a search without a query is a 422 before any gate', async () => {
    const res = await t.client().post(`/api/agents/${agent}/documents/search`).send({}).expect(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'query']);
  });
});
