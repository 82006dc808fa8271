// Choosing the language model from the environment: local by default, OpenAI-compatible when
// configured, and a sentence naming the variable when the configuration cannot work.
import { ToolgateConfigError } from '../../src/errors';
import { LocalModel } from '../../src/llm/local-model';
import { OpenAIModel } from '../../src/llm/openai-model';
import { OpenAIEmbeddings } from '../../src/llm/openai-embeddings';
import { createEmbeddings, createLanguageModel } from '../../src/llm/select-model';
import { startFakeEmbeddings } from '../support/fake-embeddings';
import { completion, startFakeOpenAI } from '../support/fake-openai';

function configError(env: NodeJS.ProcessEnv): ToolgateConfigError {
  try {
    createLanguageModel(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ToolgateConfigError);
    return err as ToolgateConfigError;
  }
  throw new Error('expected a ToolgateConfigError');
}

describe('createLanguageModel', () => {
  test('when no provider is set, then the local model is used', () => {
    expect(createLanguageModel({})).toBeInstanceOf(LocalModel);
  });

  test('when the provider is local, then other model settings are not needed', () => {
    expect(createLanguageModel({ TOOLGATE_MODEL_PROVIDER: 'local' })).toBeInstanceOf(LocalModel);
  });

  test('when the provider is openai with a key, then the OpenAI model is used with the default model name', () => {
    const model = createLanguageModel({ TOOLGATE_MODEL_PROVIDER: 'openai', TOOLGATE_MODEL_API_KEY: 'sk-test' });
    expect(model).toBeInstanceOf(OpenAIModel);
    expect((model as OpenAIModel).model).toBe('gpt-4o-mini');
  });

  test('when the provider is openai and only OPENAI_API_KEY is set, then that key is used', () => {
    expect(createLanguageModel({ TOOLGATE_MODEL_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-test' })).toBeInstanceOf(OpenAIModel);
  });

  test('when the provider is openai without a key, then the start fails naming TOOLGATE_MODEL_API_KEY', () => {
    const err = configError({ TOOLGATE_MODEL_PROVIDER: 'openai' });
    expect(err.code).toBe('ERR_TOOLGATE_MODEL_KEY');
    expect(err.message).toContain('TOOLGATE_MODEL_API_KEY');
  });

  test.each([
    ['the provider is unknown', { TOOLGATE_MODEL_PROVIDER: 'anthropic' }, 'TOOLGATE_MODEL_PROVIDER'],
    [
      'the timeout is not a number',
      { TOOLGATE_MODEL_PROVIDER: 'openai', TOOLGATE_MODEL_API_KEY: 'k', TOOLGATE_MODEL_TIMEOUT_MS: 'soon' },
      'TOOLGATE_MODEL_TIMEOUT_MS',
    ],
    [
      'the base URL is not a URL',
      { TOOLGATE_MODEL_PROVIDER: 'openai', TOOLGATE_MODEL_API_KEY: 'k', TOOLGATE_MODEL_BASE_URL: 'localhost:8080' },
      'TOOLGATE_MODEL_BASE_URL',
    ],
  ])('when %s, then the start fails naming the variable', (_what, env, variable) => {
    const err = configError(env);
    expect(err.code).toBe('ERR_TOOLGATE_MODEL_ENV');
    expect(err.message).toContain(variable);
  });

  test('when the key is refused as configuration, then the message does not carry the key', () => {
    const err = configError({
      TOOLGATE_MODEL_PROVIDER: 'openai',
      TOOLGATE_MODEL_API_KEY: 'sk-secret-value',
      TOOLGATE_MODEL_TIMEOUT_MS: '-5',
    });
    expect(err.message).not.toContain('sk-secret-value');
  });

  test('when base URL, model name and key are configured, then requests go there with that model and key', async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.script(() => completion('Hello from the fake.'));
      const model = createLanguageModel({
        TOOLGATE_MODEL_PROVIDER: 'openai',
        TOOLGATE_MODEL_API_KEY: 'sk-configured',
        TOOLGATE_MODEL_BASE_URL: fake.baseURL,
        TOOLGATE_MODEL_NAME: 'local-llama',
        TOOLGATE_MODEL_TIMEOUT_MS: '2000',
      });
      await expect(model.chat('Hi', { agentName: 'Scout', systemPrompt: null, now: new Date() })).resolves.toBe('Hello from the fake.');
      expect((fake.requests[0].body as { model: string }).model).toBe('local-llama');
      expect(fake.requests[0].headers.authorization).toBe('Bearer sk-configured');
    } finally {
      await fake.close();
    }
  });
});

describe('createEmbeddings', () => {
  const openai = { TOOLGATE_MODEL_PROVIDER: 'openai', TOOLGATE_MODEL_API_KEY: 'sk-test' };
  const thrown = (env: NodeJS.ProcessEnv) => {
    try {
      createEmbeddings(env);
    } catch (err) {
      return err as ToolgateConfigError;
    }
    throw new Error('expected a ToolgateConfigError');
  };

  test('when the provider is local, then there are no embeddings: search goes by words, and nothing is sent anywhere', () => {
    expect(createEmbeddings({})).toBeUndefined();
    expect(createEmbeddings({ TOOLGATE_EMBEDDING_MODEL: 'none' })).toBeUndefined();
  });

  test('when an embedding setting is given with the local provider, then the start fails naming it', () => {
    const err = thrown({ TOOLGATE_EMBEDDING_MODEL: 'nomic-embed-text' });
    expect(err).toMatchObject({
      code: 'ERR_TOOLGATE_MODEL_ENV',
      message: expect.stringMatching(/TOOLGATE_EMBEDDING_MODEL is set, but the local model/),
    });
    expect(thrown({ TOOLGATE_EMBEDDING_DIMENSIONS: '256' }).message).toMatch(/TOOLGATE_EMBEDDING_DIMENSIONS/);
  });

  test('when the provider is openai, then embeddings are on with text-embedding-3-small, unless the model is none', () => {
    const embeddings = createEmbeddings(openai);
    expect(embeddings).toBeInstanceOf(OpenAIEmbeddings);
    expect(embeddings).toMatchObject({ model: 'text-embedding-3-small', dimensions: undefined });
    expect(createEmbeddings({ ...openai, TOOLGATE_EMBEDDING_MODEL: 'none' })).toBeUndefined();
  });

  test('when a model and dimensions are given, then they are used', () => {
    expect(
      createEmbeddings({ ...openai, TOOLGATE_EMBEDDING_MODEL: 'nomic-embed-text', TOOLGATE_EMBEDDING_DIMENSIONS: '768' }),
    ).toMatchObject({
      model: 'nomic-embed-text',
      dimensions: 768,
    });
  });

  test('when the dimensions are not a whole number from 1 to 16000, then the start fails naming the variable', () => {
    for (const value of ['0', '16001', '1.5', 'many']) {
      expect(thrown({ ...openai, TOOLGATE_EMBEDDING_DIMENSIONS: value })).toMatchObject({
        code: 'ERR_TOOLGATE_MODEL_ENV',
        message: expect.stringContaining('TOOLGATE_EMBEDDING_DIMENSIONS'),
      });
    }
  });

  test('when an embeddings base URL is given, then embeddings go there while the chat model keeps its own', async () => {
    const fake = await startFakeEmbeddings();
    try {
      const embeddings = createEmbeddings({
        ...openai,
        TOOLGATE_MODEL_BASE_URL: 'http://127.0.0.1:9/v1',
        TOOLGATE_EMBEDDING_BASE_URL: fake.baseURL,
      });
      const [vector] = await embeddings!.embed(['refund']);
      expect(vector!.length).toBeGreaterThan(0);
      expect(fake.requests).toEqual([{ model: 'text-embedding-3-small', input: ['refund'] }]);
    } finally {
      await fake.close();
    }
  });
});
