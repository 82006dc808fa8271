// Semantic search through the official client against a local server that speaks the embeddings
// protocol with deterministic vectors: chunks embedded in batches on upload, a question found by
// meaning when it shares no word with the passage, the two lists fused, a provider that fails
// costing the semantic list only, and a change of dimensions seen per chunk and re-embedded.
import { DatabaseError, QueryTypes } from 'sequelize';
import { DocumentStore } from '../../src/documents/document-store';
import { PgFullTextSearch } from '../../src/documents/full-text-search';
import { HybridSearch } from '../../src/documents/hybrid-search';
import type { VectorSearch } from '../../src/documents/vector-search';
import { OpenAIEmbeddings } from '../../src/llm/openai-embeddings';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startFakeEmbeddings, type FakeEmbeddings } from '../support/fake-embeddings';
import { createAgent } from './support';

let db: TestDatabase;
let fake: FakeEmbeddings;

const embeddingsOf = (options: { dimensions?: number; batchSize?: number; timeoutMs?: number } = {}) =>
  new OpenAIEmbeddings({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'fake-embed', maxRetries: 0, timeoutMs: 2_000, ...options });

const REFUNDS = 'Refunds are issued within 14 days of the return reaching us.';
const SHIPPING = 'Every parcel leaves the warehouse packed with dry ice.';
const HOURS = 'The Riverside shop opens at nine and closes at six.';

beforeAll(async () => {
  db = await createTestDatabase();
  fake = await startFakeEmbeddings();
});
afterAll(async () => {
  await fake.close();
  await db.drop();
});
beforeEach(() => {
  fake.down = false;
  fake.hang = false;
  fake.inputs.length = 0;
  fake.requests.length = 0;
});

async function freshAgent(store: DocumentStore, docs: string[]): Promise<number> {
  const agentId = await createAgent(db.sequelize, 'Sundae');
  for (const [i, content] of docs.entries()) await store.add(agentId, { title: `Doc ${i + 1}`, content });
  return agentId;
}

async function vectorsOf(agentId: number) {
  return db.sequelize.query<{ embedding_model: string | null; embedding_dimensions: number | null; norm: number | null }>(
    `SELECT embedding_model, embedding_dimensions, sqrt((SELECT sum(x * x) FROM unnest(embedding) x)) AS norm
       FROM document_chunks WHERE agent_id = :agentId ORDER BY id`,
    { replacements: { agentId }, type: QueryTypes.SELECT },
  );
}

describe('embedding on upload', () => {
  it('when a document is added, then its chunks are embedded in batches of the configured size, each stored at unit length', async () => {
    const store = new DocumentStore(db.sequelize, {
      embeddings: embeddingsOf({ dimensions: 16, batchSize: 4 }),
      chunks: { maxChars: 60, overlapChars: 0 },
    });
    const sentences = Array.from({ length: 10 }, (_, i) => `Sentence number ${i + 1} is about flavour ${i + 1}.`);
    const agentId = await freshAgent(store, [sentences.join(' ')]);
    const rows = await vectorsOf(agentId);
    expect(rows.length).toBe(10);
    expect(fake.requests.map((r) => r.input.length)).toEqual([4, 4, 2]);
    expect(fake.requests.every((r) => r.dimensions === 16 && r.model === 'fake-embed')).toBe(true);
    for (const row of rows) {
      expect(row).toMatchObject({ embedding_model: 'fake-embed', embedding_dimensions: 16 });
      expect(row.norm).toBeCloseTo(1, 5);
    }
  });

  it('when the provider is down at upload, then the document is stored and searchable by its words, and the job embeds it later', async () => {
    const store = new DocumentStore(db.sequelize, { embeddings: embeddingsOf({ dimensions: 16 }) });
    fake.down = true;
    const agentId = await freshAgent(store, [REFUNDS]);
    expect((await vectorsOf(agentId)).map((r) => r.embedding_model)).toEqual([null]);
    expect((await store.search(agentId, 'refunds', 5)).hits.map((h) => h.found_by)).toEqual([['lexical']]);
    fake.down = false;
    expect(await store.embedder!.embedPending()).toBeGreaterThanOrEqual(1);
    expect((await vectorsOf(agentId)).map((r) => r.embedding_model)).toEqual(['fake-embed']);
  });
});

describe('semantic search', () => {
  let store: DocumentStore;
  let agentId: number;
  beforeAll(async () => {
    store = new DocumentStore(db.sequelize, { embeddings: embeddingsOf({ dimensions: 64 }) });
    agentId = await freshAgent(store, [REFUNDS, SHIPPING, HOURS]);
  });

  it('when a question shares no word with a passage that answers it, then the passage is found by meaning', async () => {
    const lexicalOnly = new DocumentStore(db.sequelize);
    expect((await lexicalOnly.search(agentId, 'Can I get my money back?', 5)).hits).toEqual([]);
    const found = await store.search(agentId, 'Can I get my money back?', 5);
    expect(found.retrieval).toEqual({ semantic: 'used' });
    expect(found.hits[0]).toMatchObject({ title: 'Doc 1', found_by: ['semantic'] });
    expect(found.hits[0]!.snippet).toBe(REFUNDS);
  });

  it('when a chunk is found by both lists, then it ranks above chunks found by one, and says so', async () => {
    const found = await store.search(agentId, 'When does the shop close?', 3);
    expect(found.hits[0]).toMatchObject({ title: 'Doc 3', found_by: ['lexical', 'semantic'] });
    expect(found.hits.slice(1).every((h) => h.found_by.length === 1)).toBe(true);
    expect(found.hits[0]!.score).toBeGreaterThan(found.hits[1]!.score);
  });

  it('when no embeddings are configured, then search is by words only and says semantic search is off', async () => {
    const found = await new DocumentStore(db.sequelize).search(agentId, 'shop close', 3);
    expect(found.retrieval).toEqual({ semantic: 'off' });
    expect(found.hits.every((h) => h.found_by.join() === 'lexical')).toBe(true);
  });

  it('when the provider is down, then the lexical results come back, marked as such, and nothing throws', async () => {
    fake.down = true;
    const found = await store.search(agentId, 'When does the shop close?', 3);
    expect(found.retrieval.semantic).toBe('unavailable');
    expect(found.retrieval.note).toMatch(/match the query's words only/);
    expect(found.hits.map((h) => [h.title, h.found_by])).toEqual([['Doc 3', ['lexical']]]);
  });

  it('when the provider never answers, then the search still answers, by words, within the deadline', async () => {
    fake.hang = true;
    const slow = new DocumentStore(db.sequelize, { embeddings: embeddingsOf({ dimensions: 64, timeoutMs: 300 }) });
    const started = Date.now();
    const found = await slow.search(agentId, 'When does the shop close?', 3);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(found.retrieval.semantic).toBe('unavailable');
    expect(found.hits[0]!.title).toBe('Doc 3');
  });
});

describe('a change of dimensions', () => {
  it('when the dimensions change, then old vectors are never compared with new ones, the search says so, and the job re-embeds them', async () => {
    const before = new DocumentStore(db.sequelize, { embeddings: embeddingsOf({ dimensions: 16 }) });
    const agentId = await freshAgent(before, [REFUNDS, SHIPPING, HOURS]);
    const after = new DocumentStore(db.sequelize, { embeddings: embeddingsOf({ dimensions: 24 }) });

    const stale = await after.search(agentId, 'Can I get my money back?', 5);
    expect(stale.retrieval.semantic).toBe('used');
    expect(stale.retrieval.note).toMatch(/3 of this agent's chunks are not embedded with fake-embed yet/);
    expect(stale.hits).toEqual([]);
    expect((await after.embedder!.progress()).pending).toBeGreaterThanOrEqual(3);

    await after.embedder!.embedPending();
    expect(new Set((await vectorsOf(agentId)).map((r) => r.embedding_dimensions))).toEqual(new Set([24]));
    const fresh = await after.search(agentId, 'Can I get my money back?', 5);
    expect(fresh.retrieval).toEqual({ semantic: 'used' });
    expect(fresh.hits[0]).toMatchObject({ title: 'Doc 1', found_by: ['semantic'] });
    expect((await after.embedder!.progress()).pending).toBe(0);
  });
});

describe('a semantic list slower than the database allows', () => {
  it('when the vector query is cancelled by the statement timeout, then the words-only results come back, marked, with the reason', async () => {
    const lexical = new PgFullTextSearch(db.sequelize);
    const agentId = await freshAgent(new DocumentStore(db.sequelize), [HOURS]);
    const cancelled = new DatabaseError(
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014', sql: 'SELECT' }),
    );
    const vectors = { nearest: () => Promise.reject(cancelled) } as unknown as VectorSearch;
    const search = new HybridSearch(db.sequelize, { lexical, semantic: { embeddings: embeddingsOf({ dimensions: 16 }), vectors } });
    const found = await search.search(agentId, 'When does the shop close?', 3);
    expect(found.retrieval).toEqual({
      semantic: 'unavailable',
      note: "Semantic search was unavailable (comparing every vector of this agent took longer than the database allows; pgvector makes it fast); these results match the query's words only.",
    });
    expect(found.hits.map((h) => h.found_by)).toEqual([['lexical']]);
  });

  it('when the vector query fails otherwise, then the search fails: only a provider or a timeout costs the semantic list alone', async () => {
    const lexical = new PgFullTextSearch(db.sequelize);
    const broken = new DatabaseError(
      Object.assign(new Error('relation "document_chunks" does not exist'), { code: '42P01', sql: 'SELECT' }),
    );
    const vectors = { nearest: () => Promise.reject(broken) } as unknown as VectorSearch;
    const search = new HybridSearch(db.sequelize, { lexical, semantic: { embeddings: embeddingsOf({ dimensions: 16 }), vectors } });
    await expect(search.search(1, 'shop', 3)).rejects.toBe(broken);
  });
});
