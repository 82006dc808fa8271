// The re-embedding job killed with SIGKILL in the middle of a batch, then run again: every chunk
// ends with exactly one vector of the new space, the batches committed before the kill are never
// sent again, and only the batch in flight is sent twice. Then two runs at once share the work.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import { ChunkEmbedder } from '../../src/documents/chunk-embedder';
import { DocumentStore } from '../../src/documents/document-store';
import { OpenAIEmbeddings } from '../../src/llm/openai-embeddings';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startFakeEmbeddings, type FakeEmbeddings } from '../support/fake-embeddings';
import { createAgent } from './support';

let db: TestDatabase;
let fake: FakeEmbeddings;
const CHUNKS = 40;

beforeAll(async () => {
  db = await createTestDatabase();
  fake = await startFakeEmbeddings();
});
afterAll(async () => {
  await fake.close();
  await db.drop();
});

const embeddings = (dimensions = 16) =>
  new OpenAIEmbeddings({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'fake-embed', dimensions, timeoutMs: 10_000 });

/** An agent whose one document is CHUNKS chunks of one sentence, none embedded (words only). */
async function unembeddedAgent(): Promise<number> {
  const agentId = await createAgent(db.sequelize, 'Sundae');
  const content = Array.from({ length: CHUNKS }, (_, i) => `Flavour number ${i + 1} is on the menu today.`).join(' ');
  await new DocumentStore(db.sequelize, { chunks: { maxChars: 50, overlapChars: 0 } }).add(agentId, { title: 'Menu', content });
  return agentId;
}

async function spaces(agentId: number) {
  return db.sequelize.query<{ content: string; embedding_dimensions: number | null }>(
    'SELECT content, embedding_dimensions FROM document_chunks WHERE agent_id = :agentId ORDER BY id',
    { replacements: { agentId }, type: QueryTypes.SELECT },
  );
}

test('when the job is killed in the middle of a batch, then a second run embeds the rest, re-sending only the batch in flight', async () => {
  const agentId = await unembeddedAgent();
  expect((await spaces(agentId)).length).toBe(CHUNKS);
  fake.inputs.length = 0;

  const child = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), path.join(__dirname, 'embedding-job-process.ts')], {
    env: { ...process.env, TOOLGATE_TEST_DB_URL: db.url, TOOLGATE_TEST_EMBEDDINGS_URL: fake.baseURL },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  // Two batches committed; the third is then held by the server, its rows locked, when the kill comes.
  await new Promise<void>((resolve) => {
    child.stdout!.on('data', (data: Buffer) => {
      if (data.toString().includes('batch 16')) {
        fake.hang = true;
        resolve();
      }
    });
  });
  const deadline = Date.now() + 10_000;
  while (fake.inputs.length < 24 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(fake.inputs.length).toBe(24);
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  fake.hang = false;

  const afterKill = await spaces(agentId);
  expect(afterKill.filter((c) => c.embedding_dimensions === 16).length).toBe(16);
  const sentBeforeKill = fake.inputs.slice(0, 16);
  const inFlight = fake.inputs.slice(16, 24);

  const written = await new ChunkEmbedder(db.sequelize, embeddings(), 8).embedPending();
  expect(written).toBe(CHUNKS - 16);
  const final = await spaces(agentId);
  expect(final.every((c) => c.embedding_dimensions === 16)).toBe(true);

  const times = (text: string) => fake.inputs.filter((t) => t === text).length;
  for (const text of sentBeforeKill) expect(times(text)).toBe(1);
  for (const text of inFlight) expect(times(text)).toBe(2);
  expect(new Set(fake.inputs)).toEqual(new Set(final.map((c) => c.content)));
}, 60_000);

test('when two runs go at once, then they share the batches and no chunk is embedded twice', async () => {
  const agentId = await unembeddedAgent();
  fake.inputs.length = 0;
  fake.delayMs = 30;
  try {
    const [a, b] = await Promise.all([
      new ChunkEmbedder(db.sequelize, embeddings(), 8).embedPending(),
      new ChunkEmbedder(db.sequelize, embeddings(), 8).embedPending(),
    ]);
    expect(a + b).toBe(CHUNKS);
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);
  } finally {
    fake.delayMs = 0;
  }
  expect(fake.inputs.length).toBe(CHUNKS);
  expect((await spaces(agentId)).every((c) => c.embedding_dimensions === 16)).toBe(true);
}, 60_000);
