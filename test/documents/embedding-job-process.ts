// The re-embedding job in a process of its own, for the kill test (embedding-job-resume.test.ts):
// it embeds every pending chunk of TOOLGATE_TEST_DB_URL through the embeddings server at
// TOOLGATE_TEST_EMBEDDINGS_URL, 8 chunks a batch, and prints "batch <written>" after each commit.
import { ChunkEmbedder } from '../../src/documents/chunk-embedder';
import { createSequelize } from '../../src/db/connect';
import { OpenAIEmbeddings } from '../../src/llm/openai-embeddings';

async function main(): Promise<void> {
  const sequelize = createSequelize(process.env.TOOLGATE_TEST_DB_URL!);
  const embeddings = new OpenAIEmbeddings({
    apiKey: 'sk-test',
    baseURL: process.env.TOOLGATE_TEST_EMBEDDINGS_URL!,
    model: 'fake-embed',
    dimensions: 16,
    timeoutMs: 60_000,
  });
  const written = await new ChunkEmbedder(sequelize, embeddings, 8).embedPending({ onBatch: (n) => console.log(`batch ${n}`) });
  console.log(`done ${written}`);
  await sequelize.close();
}

void main();
