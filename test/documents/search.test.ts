// Full-text search over the committed corpus: the right document first, bounded results, no error
// on an empty corpus or a query with nothing to search for, and one agent's documents only.
import { DocumentStore } from '../../src/documents/document-store';
import { PgFullTextSearch } from '../../src/documents/full-text-search';
import { loadCorpus } from '../fixtures/corpus/load';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { createAgent, uploadCorpus } from './support';

let db: TestDatabase;
let store: DocumentStore;
let agentId: number;
let ids: Map<string, number>;

beforeAll(async () => {
  db = await createTestDatabase();
  store = new DocumentStore(db.sequelize);
  agentId = await createAgent(db.sequelize, 'Sundae');
  ids = await uploadCorpus(store, agentId);
});
afterAll(() => db.drop());

const QUESTIONS: [question: string, slug: string][] = [
  ['Can I get my money back if my order arrived melted?', 'refund-policy'],
  ['How long does delivery take, and is the box packed with dry ice?', 'shipping-faq'],
  ['Does the pistachio ice cream contain nuts or gluten?', 'allergen-information'],
  ['What time do you open on Sunday?', 'store-hours'],
  ['How many points do I earn in the Scoop Club?', 'loyalty-program'],
  ['What is the franchise fee to open my own shop?', 'franchise-guide'],
  ['How do I ask you to delete my personal data?', 'privacy-policy'],
  ['How long is the meal break on an eight hour shift?', 'employee-handbook-excerpt'],
  ['What is the minimum order for catering a birthday party?', 'catering-and-events'],
  ['Do gift cards expire?', 'gift-cards'],
  ['refund -"gift card"', 'refund-policy'],
  ['"dry ice" gloves', 'shipping-faq'],
];

describe.each(QUESTIONS)('when the corpus is searched for %j', (question, slug) => {
  it(`then a chunk of ${slug} ranks first`, async () => {
    const [first] = (await store.search(agentId, question, 5)).hits;
    expect(first).toBeDefined();
    expect(first!.document_id).toBe(ids.get(slug));
  });
});

describe('search results', () => {
  it('when a query matches many chunks, then top_k bounds the results', async () => {
    for (const topK of [1, 3, 7]) expect((await store.search(agentId, 'ice cream shop order', topK)).hits).toHaveLength(topK);
  });

  it('when top_k is over the maximum, then at most 50 results come back', async () => {
    const hits = (await store.search(agentId, 'the ice cream or shop or order or scoop or points', 500)).hits;
    expect(hits.length).toBeLessThanOrEqual(50);
  });

  it('when top_k is not a positive integer, then search refuses it', async () => {
    await expect(store.search(agentId, 'refund', 0)).rejects.toThrow(RangeError);
    await expect(store.search(agentId, 'refund', 1.5)).rejects.toThrow(RangeError);
  });

  it('when results come back, then scores never increase down the list and ties keep document order', async () => {
    const hits = (await store.search(agentId, 'ice cream scoop', 20)).hits;
    expect(hits.length).toBeGreaterThan(5);
    for (let i = 1; i < hits.length; i++) {
      const [a, b] = [hits[i - 1]!, hits[i]!];
      expect(b.score).toBeLessThanOrEqual(a.score);
      if (a.score === b.score) expect(a.document_id * 1e6 + a.chunk_index).toBeLessThan(b.document_id * 1e6 + b.chunk_index);
    }
  });

  it('when the same search runs twice, then it returns the same list', async () => {
    expect((await store.search(agentId, 'scoop flavors', 10)).hits).toEqual((await store.search(agentId, 'scoop flavors', 10)).hits);
  });

  it('when a result comes back, then it names the document, its chunk and a plain-text snippet of the match', async () => {
    const [hit] = (await store.search(agentId, 'dry ice gloves', 1)).hits;
    expect(hit).toMatchObject({ document_id: ids.get('shipping-faq'), title: 'Shipping FAQ' });
    expect(hit!.snippet.toLowerCase()).toContain('gloves');
    expect(hit!.snippet).not.toMatch(/<\/?b>|\n/);
    expect(hit!.score).toBeGreaterThan(0);
    expect(hit!.score).toBeLessThan(1);
    const content = loadCorpus().find((d) => d.slug === 'shipping-faq')!.content;
    expect(content).toContain(hit!.content);
  });

  it('when a chunk holds more of the query words, then it ranks above one holding fewer', async () => {
    const hits = (await store.search(agentId, 'tracking link label', 10)).hits;
    expect(hits[0]!.document_id).toBe(ids.get('shipping-faq'));
    expect(hits[0]!.score).toBeGreaterThan(hits[hits.length - 1]!.score);
  });

  it('when a query excludes a word, then no chunk holding it comes back', async () => {
    const hits = (await store.search(agentId, 'refund -gift', 20)).hits;
    expect(hits.length).toBeGreaterThan(0);
    for (const h of hits) expect(h.content.toLowerCase()).not.toContain('gift');
  });

  it('when a query holds only stop words or punctuation, then the result is empty, not an error', async () => {
    for (const query of ['the and of', 'what is it?', '?!... ---', '""', '-', 'or', '   ']) {
      expect((await store.search(agentId, query, 5)).hits).toEqual([]);
    }
  });

  it('when no chunk holds any query word, then the result is empty', async () => {
    expect((await store.search(agentId, 'xylophone zeppelin', 5)).hits).toEqual([]);
  });

  it('when a query has SQL or tsquery syntax in it, then it is searched as words', async () => {
    const hits = (await store.search(agentId, "refund'); DROP TABLE documents; -- & | ! <-> :*", 3)).hits;
    expect(hits[0]!.document_id).toBe(ids.get('refund-policy'));
  });
});

describe('search scope', () => {
  it('when another agent searches, then it never sees this agent documents', async () => {
    const other = await createAgent(db.sequelize, 'Scout');
    expect((await store.search(other, 'refund melted order', 10)).hits).toEqual([]);
    await store.add(other, { title: 'Scout notes', content: 'Refunds for melted orders go through Mara.' });
    const hits = (await store.search(other, 'refund melted order', 10)).hits;
    expect(hits.map((h) => h.title)).toEqual(['Scout notes']);
    const mine = (await store.search(agentId, 'refund melted order', 50)).hits;
    expect(mine.map((h) => h.title)).not.toContain('Scout notes');
  });

  it('when an agent has no documents, then every search gives an empty result, not an error', async () => {
    const empty = await createAgent(db.sequelize, 'Empty');
    expect(await new PgFullTextSearch(db.sequelize).search(empty, 'refund', 5)).toEqual([]);
    expect((await store.search(empty, 'the', 5)).hits).toEqual([]);
  });

  it('when two chunks each hold one query word, then the one holding the rarer word ranks first (BM25 idf)', async () => {
    const shop = await createAgent(db.sequelize, 'Flavours');
    const lines = [
      'Vanilla flavour is sold daily.',
      'Chocolate flavour is sold daily.',
      'Strawberry flavour is sold daily.',
      'Pistachio is sold on weekends.',
    ];
    for (const [i, content] of lines.entries()) await store.add(shop, { title: `Line ${i + 1}`, content });
    const hits = (await store.search(shop, 'pistachio flavour', 4)).hits;
    expect(hits.map((h) => h.title)).toEqual(['Line 4', 'Line 1', 'Line 2', 'Line 3']);
  });
});
