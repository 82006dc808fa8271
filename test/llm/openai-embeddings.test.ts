// OpenAIEmbeddings through the official client against a local embeddings server: options checked at
// construction, vectors in the texts' order and of one length, every failure a ModelError.
import { ModelError } from '../../src/llm/language-model';
import { OpenAIEmbeddings, type OpenAIEmbeddingsOptions } from '../../src/llm/openai-embeddings';
import { fakeVector, startFakeEmbeddings, type FakeEmbeddings } from '../support/fake-embeddings';

let fake: FakeEmbeddings;
beforeAll(async () => {
  fake = await startFakeEmbeddings();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.down = false;
  fake.nativeDimensions = 32;
  fake.requests.length = 0;
});

const make = (options: Partial<OpenAIEmbeddingsOptions> = {}) =>
  new OpenAIEmbeddings({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'fake-embed', timeoutMs: 2_000, ...options });

async function failure(work: Promise<unknown>): Promise<ModelError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ModelError);
  return err as ModelError;
}

test.each([
  [{ model: ' ' }, /needs a model name/],
  [{ dimensions: 0 }, /dimensions must be an integer from 1 to 16000/],
  [{ batchSize: 5000 }, /batchSize must be an integer from 1 to 2048/],
])('when constructed with %p, then it throws ERR_TOOLGATE_EMBEDDINGS', (options, message) => {
  expect(() => make(options)).toThrow(
    expect.objectContaining({ code: 'ERR_TOOLGATE_EMBEDDINGS', message: expect.stringMatching(message) }),
  );
});

test('when texts are embedded, then each gets its vector, in order, the requests carrying at most batchSize texts', async () => {
  const texts = ['refund', 'parcel', 'opening hours', 'nuts', 'melted'];
  const vectors = await make({ dimensions: 8, batchSize: 2 }).embed(texts);
  expect(vectors).toEqual(texts.map((t) => fakeVector(t, 8)));
  expect(fake.requests.map((r) => [r.input.length, r.dimensions])).toEqual([
    [2, 8],
    [2, 8],
    [1, 8],
  ]);
});

test('when no dimensions are configured, then none are asked for and the first answer sets the length', async () => {
  const embeddings = make();
  expect(embeddings.dimensions).toBeUndefined();
  await embeddings.embed(['refund']);
  expect(fake.requests[0]).not.toHaveProperty('dimensions');
  expect(embeddings.dimensions).toBe(32);
  fake.nativeDimensions = 48;
  const err = await failure(embeddings.embed(['refund']));
  expect(err).toMatchObject({ kind: 'invalid_output', message: expect.stringMatching(/48 dimensions where 32 were expected/) });
});

test('when the provider answers 503, then it is retried once, and a second 503 is an upstream ModelError', async () => {
  fake.down = true;
  const err = await failure(make({ maxRetries: 1 }).embed(['refund']));
  expect(err).toMatchObject({ kind: 'upstream', message: 'The model provider answered HTTP 503.' });
  expect(fake.requests).toHaveLength(2);
});

test('when the provider cannot be reached, then it is an upstream ModelError', async () => {
  const err = await failure(
    new OpenAIEmbeddings({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:9/v1', model: 'm', maxRetries: 0 }).embed(['x']),
  );
  expect(err.kind).toBe('upstream');
});
