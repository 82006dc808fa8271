// ask: an answer from the top chunks, those chunks as its sources, and with the local model an
// answer made only of text copied from the sources.
import { askDocuments } from '../../src/documents/ask';

/** What askDocuments asks the model with: the model's answerQuestion, its context bound. */
type AnswerFn = Parameters<typeof askDocuments>[1];
import { DocumentStore } from '../../src/documents/document-store';
import { NO_ANSWER, type ModelSource } from '../../src/llm/language-model';
import { LocalModel } from '../../src/llm/local-model';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { createAgent, uploadCorpus } from './support';

let db: TestDatabase;
let store: DocumentStore;
let agentId: number;
let ids: Map<string, number>;

const model = new LocalModel();
const local: AnswerFn = (question, sources) =>
  model.answerQuestion(question, sources, { agentName: 'Sundae', systemPrompt: null, now: new Date('2026-01-05T10:00:00Z') });

beforeAll(async () => {
  db = await createTestDatabase();
  store = new DocumentStore(db.sequelize);
  agentId = await createAgent(db.sequelize, 'Sundae');
  ids = await uploadCorpus(store, agentId);
});
afterAll(() => db.drop());

const QUESTIONS = [
  'Can I get my money back if my order arrived melted?',
  'Does the pistachio ice cream contain nuts or gluten?',
  'What time do you open on Sunday?',
  'What is the franchise fee to open my own shop?',
  'How do I ask you to delete my personal data?',
  'Do gift cards expire?',
  'Is the Riverside shop open on Mondays?',
  'How long is the meal break on an eight hour shift?',
];

describe('ask with the local model', () => {
  it.each(QUESTIONS)('when asked %j, then the answer is only text copied from its sources', async (question) => {
    const { answer, sources } = await askDocuments(store, local, agentId, question, 3);
    expect(sources.length).toBeGreaterThan(0);
    expect(answer).not.toBe(NO_ANSWER);
    const chunks = (await store.search(agentId, question, 3)).hits.map((h) => h.content);
    for (const line of answer.split('\n')) expect(chunks.some((c) => c.includes(line.trim()))).toBe(true);
  });

  it('when asked a question a document answers, then the answer holds the sentence that answers it', async () => {
    expect((await askDocuments(store, local, agentId, 'What is the franchise fee?', 3)).answer).toContain(
      'The initial franchise fee is 35,000 dollars',
    );
    expect((await askDocuments(store, local, agentId, 'Do gift cards expire?', 3)).answer).toContain('Gift cards never expire');
  });
});

describe('ask', () => {
  it('when asked, then the model gets the top chunks as sources, and they come back in the search shape', async () => {
    const seen: ModelSource[][] = [];
    const recording: AnswerFn = async (_q, sources) => (seen.push(sources), 'An answer.');
    const result = await askDocuments(store, recording, agentId, 'Who approves a large refund?', 2);
    const hits = (await store.search(agentId, 'Who approves a large refund?', 2)).hits;
    expect(result).toEqual({
      answer: 'An answer.',
      answered: true,
      sources: hits.map(({ content: _content, ...r }) => r),
      retrieval: { semantic: 'off' },
    });
    expect(seen).toEqual([hits.map((h) => ({ title: h.title, text: h.content }))]);
    expect(result.sources[0]!.document_id).toBe(ids.get('refund-policy'));
  });

  it('when top_k is given, then it bounds the sources', async () => {
    expect((await askDocuments(store, local, agentId, 'ice cream shop order', 2)).sources).toHaveLength(2);
  });

  const refusing: AnswerFn = () => Promise.reject(new Error('the model must not be asked without sources'));

  it('when no document matches, then the answer says so, with no sources, and the model is not asked', async () => {
    expect(await askDocuments(store, refusing, agentId, 'xylophone zeppelin', 3)).toEqual({
      answer: NO_ANSWER,
      answered: false,
      sources: [],
      retrieval: { semantic: 'off' },
    });
  });

  it('when the agent has no documents, then the answer says so, not an error', async () => {
    const empty = await createAgent(db.sequelize, 'Empty');
    expect(await askDocuments(store, refusing, empty, 'What is the refund policy?', 3)).toEqual({
      answer: NO_ANSWER,
      answered: false,
      sources: [],
      retrieval: { semantic: 'off' },
    });
  });

  it('when the model returns nothing, then the answer says the documents do not answer it, citing no source', async () => {
    const result = await askDocuments(store, async () => '  ', agentId, 'refund', 2);
    expect(result).toMatchObject({ answer: NO_ANSWER, answered: false, sources: [] });
  });

  it('when the model names the sources it used, then only those come back as sources', async () => {
    const hits = (await store.search(agentId, 'Who approves a large refund?', 3)).hits;
    const result = await askDocuments(
      store,
      async () => ({ answered: true, text: 'The manager does.', cited: [1] }),
      agentId,
      'Who approves a large refund?',
      3,
    );
    expect(result.answer).toBe('The manager does.');
    expect(result.sources.map((s) => s.chunk_id)).toEqual([hits[1]!.chunk_id]);
  });

  it('when the model says the sources do not hold the answer, then the answer says so, citing no source', async () => {
    const result = await askDocuments(
      store,
      async () => ({ answered: false, text: '', cited: [] }),
      agentId,
      'Who approves a large refund?',
      3,
    );
    expect(result).toMatchObject({ answer: NO_ANSWER, answered: false, sources: [] });
  });
});
