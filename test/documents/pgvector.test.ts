// Semantic search on a server with the pgvector extension: VectorIndex creates the extension and an
// HNSW index for the configured model and dimensions, the planner can answer the nearest-chunks
// query from it, and the ranking is the exact SQL's. The embedded server has no pgvector, so this
// runs only where TOOLGATE_TEST_PGVECTOR_URL names a server that has it (an admin URL: a database of
// its own is created there and dropped), e.g. postgres://postgres@127.0.0.1:5432/postgres.
import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { createSequelize } from '../../src/db/connect';
import { withClient, withDatabase } from '../../src/db/database-url';
import { quoteIdent } from '../../src/db/quote-ident';
import { migrateUp } from '../../src/db/migrate';
import { DocumentStore } from '../../src/documents/document-store';
import { VectorIndex } from '../../src/documents/vector-index';
import { VectorSearch } from '../../src/documents/vector-search';
import { unitVector } from '../../src/llm/embeddings';
import { OpenAIEmbeddings } from '../../src/llm/openai-embeddings';
import { fakeVector, startFakeEmbeddings, type FakeEmbeddings } from '../support/fake-embeddings';
import { createAgent } from './support';

const adminUrl = process.env.TOOLGATE_TEST_PGVECTOR_URL;
const DIMS = 32;
const PASSAGES = [
  'Refunds are issued within 14 days of the return reaching us.',
  'Every parcel leaves the warehouse packed with dry ice.',
  'The Riverside shop opens at nine and closes at six.',
  'Pistachio and hazelnut flavours hold nuts.',
  'Melted pints are replaced at no cost.',
];

(adminUrl ? describe : describe.skip)('pgvector (TOOLGATE_TEST_PGVECTOR_URL)', () => {
  const name = `toolgate_t_pgvector_${randomBytes(4).toString('hex')}`;
  let sequelize: ReturnType<typeof createSequelize>;
  let fake: FakeEmbeddings;

  beforeAll(async () => {
    await withClient(adminUrl!, (c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
    sequelize = createSequelize(withDatabase(adminUrl!, name));
    await migrateUp(sequelize);
    fake = await startFakeEmbeddings();
  }, 60_000);
  afterAll(async () => {
    await fake?.close();
    await sequelize?.close();
    await withClient(adminUrl!, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
  });

  it('when prepared, then the extension and an HNSW index for the model and dimensions exist, and searches rank as the exact SQL does', async () => {
    const embeddings = new OpenAIEmbeddings({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'fake-embed', dimensions: DIMS });
    const index = new VectorIndex(sequelize);
    const store = new DocumentStore(sequelize, { embeddings, vectorEngine: index.engine });
    const agentId = await createAgent(sequelize, 'Sundae');
    for (const [i, content] of PASSAGES.entries()) await store.add(agentId, { title: `Doc ${i + 1}`, content });

    const started = await index.prepare({ model: 'fake-embed', dimensions: DIMS });
    expect(started).toMatchObject({ engine: 'pgvector', index: null, reason: expect.stringMatching(/being built/) });
    const state = await index.whenBuilt();
    expect(state).toMatchObject({ engine: 'pgvector', index: expect.stringMatching(/^document_chunks_toolgate_hnsw_32_/) });
    const [row] = await sequelize.query<{ am: string }>(
      `SELECT am.amname AS am FROM pg_class c JOIN pg_am am ON am.oid = c.relam WHERE c.relname = :index`,
      { replacements: { index: state.index }, type: QueryTypes.SELECT },
    );
    expect(row!.am).toBe('hnsw');

    const space = { model: 'fake-embed', dimensions: DIMS };
    for (const question of ['Can I get my money back?', 'Is the box cold when it arrives?', 'When does the shop close?']) {
      const query = unitVector(fakeVector(question, DIMS));
      const exact = await new VectorSearch(sequelize, () => 'exact').nearest(agentId, query, space, 5);
      const viaPgvector = await new VectorSearch(sequelize, () => 'pgvector').nearest(agentId, query, space, 5);
      expect(viaPgvector.map((h) => h.chunk_id)).toEqual(exact.map((h) => h.chunk_id));
      viaPgvector.forEach((h, i) => expect(h.score).toBeCloseTo(exact[i]!.score, 4));
    }
    const found = await store.search(agentId, 'Can I get my money back?', 3);
    expect(found.hits[0]).toMatchObject({ title: 'Doc 1', found_by: ['semantic'] });
  });

  it("when a sort is made expensive, then the planner answers VectorSearch's own query from the HNSW index", async () => {
    // The query VectorSearch sends, caught on its way out, then explained with the same bind values.
    const seen: { sql: string; bind: unknown[] }[] = [];
    const hook = (options: { bind?: unknown[] }, query: { sql?: unknown }) => {
      if (typeof query.sql === 'string' && query.sql.includes('<=>')) seen.push({ sql: query.sql, bind: options.bind ?? [] });
    };
    (sequelize.addHook as (type: string, name: string, fn: typeof hook) => void)('afterQuery', 'catch-nearest', hook);
    const agentId = Number(
      (await sequelize.query<{ id: string }>('SELECT min(agent_id)::text AS id FROM document_chunks', { type: QueryTypes.SELECT }))[0]!.id,
    );
    await new VectorSearch(sequelize, () => 'pgvector').nearest(
      agentId,
      unitVector(fakeVector('refund', DIMS)),
      { model: 'fake-embed', dimensions: DIMS },
      3,
    );
    sequelize.removeHook('afterQuery' as never, 'catch-nearest');
    expect(seen).toHaveLength(1);
    const plan = await sequelize.transaction(async (transaction) => {
      await sequelize.query('SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off', { transaction });
      const [rows] = (await sequelize.query(`EXPLAIN ${seen[0]!.sql}`, { bind: seen[0]!.bind, transaction })) as [
        { 'QUERY PLAN': string }[],
        unknown,
      ];
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/Index Scan using document_chunks_toolgate_hnsw_32_/);
  });

  it('when stopped during a build, then the build is cancelled at once, and the next prepare builds a valid index', async () => {
    const space = { model: 'stop-test', dimensions: 256 };
    const agentId = await createAgent(sequelize, 'Bulk');
    const [doc] = await sequelize.query<{ id: string }>(
      `INSERT INTO documents (agent_id, title, content) VALUES (${agentId}, 'bulk', 'x') RETURNING id::text`,
      {
        type: QueryTypes.SELECT,
      },
    );
    await sequelize.query(
      `INSERT INTO document_chunks (document_id, agent_id, chunk_index, content, embedding, embedding_model, embedding_dimensions)
       SELECT ${doc!.id}, ${agentId}, g, 'chunk', (SELECT array_agg(random()::real - 0.5) FROM generate_series(1, 256) WHERE g > 0), 'stop-test', 256
         FROM generate_series(0, 19999) g`,
    );
    const index = new VectorIndex(sequelize);
    await index.prepare(space);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const [running] = await sequelize.query<{ n: string }>(
        "SELECT count(*)::text AS n FROM pg_stat_activity WHERE query LIKE 'CREATE INDEX CONCURRENTLY%' AND state = 'active'",
        { type: QueryTypes.SELECT },
      );
      if (running!.n !== '0') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const started = Date.now();
    await index.stop();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(index.current()).toMatchObject({ engine: 'pgvector', index: null, reason: expect.stringMatching(/could not be built/) });

    await index.prepare(space);
    const built = await index.whenBuilt();
    const [valid] = await sequelize.query<{ indisvalid: boolean }>(
      `SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(:name)`,
      {
        replacements: { name: built.index },
        type: QueryTypes.SELECT,
      },
    );
    expect(valid!.indisvalid).toBe(true);
  }, 120_000);
});
