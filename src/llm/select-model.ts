// Which language model and embeddings the service runs, from the environment: the local model and
// no embeddings unless TOOLGATE_MODEL_PROVIDER=openai (then embeddings too, unless
// TOOLGATE_EMBEDDING_MODEL=none). A bad setting stops the start with a sentence naming the variable.
import { z } from 'zod';
import { ToolgateConfigError } from '../errors';
import type { Embeddings } from './embeddings';
import type { LanguageModel } from './language-model';
import { LocalModel } from './local-model';
import { OpenAIEmbeddings } from './openai-embeddings';
import { OpenAIModel } from './openai-model';

export const DEFAULT_MODEL_NAME = 'gpt-4o-mini';
export const DEFAULT_EMBEDDING_MODEL = 'text-embedding-3-small';
/** TOOLGATE_EMBEDDING_MODEL's value that turns semantic search off with a remote provider. */
const NO_EMBEDDINGS = 'none';

const text = z
  .string()
  .transform((s) => s.trim())
  .optional()
  .transform((s) => (s ? s : undefined));

const modelEnvSchema = z.object({
  TOOLGATE_MODEL_PROVIDER: z
    .string()
    .transform((s) => s.trim().toLowerCase())
    .pipe(z.enum(['local', 'openai']))
    .optional(),
  TOOLGATE_MODEL_API_KEY: text,
  OPENAI_API_KEY: text,
  TOOLGATE_MODEL_BASE_URL: text.pipe(z.url({ protocol: /^https?$/ }).optional()),
  TOOLGATE_MODEL_NAME: text,
  TOOLGATE_MODEL_TIMEOUT_MS: text.pipe(z.coerce.number<string | undefined>().int().min(1).max(600_000).optional()),
  TOOLGATE_EMBEDDING_MODEL: text,
  TOOLGATE_EMBEDDING_DIMENSIONS: text.pipe(z.coerce.number<string | undefined>().int().min(1).max(16_000).optional()),
  TOOLGATE_EMBEDDING_BASE_URL: text.pipe(z.url({ protocol: /^https?$/ }).optional()),
});
type ModelEnv = z.infer<typeof modelEnvSchema>;

export function createLanguageModel(env: NodeJS.ProcessEnv = process.env): LanguageModel {
  const e = readModelEnv(env);
  if (e.TOOLGATE_MODEL_PROVIDER !== 'openai') return new LocalModel();
  return new OpenAIModel({
    apiKey: apiKeyOf(e),
    baseURL: e.TOOLGATE_MODEL_BASE_URL,
    model: e.TOOLGATE_MODEL_NAME ?? DEFAULT_MODEL_NAME,
    timeoutMs: e.TOOLGATE_MODEL_TIMEOUT_MS,
  });
}

/**
 * The embeddings behind semantic search, or none. With the local provider nothing is ever sent
 * anywhere, so a TOOLGATE_EMBEDDING_* setting there is a mistake, said at start.
 */
export function createEmbeddings(env: NodeJS.ProcessEnv = process.env): Embeddings | undefined {
  const e = readModelEnv(env);
  const model = e.TOOLGATE_EMBEDDING_MODEL;
  if (e.TOOLGATE_MODEL_PROVIDER !== 'openai') {
    const set = (['TOOLGATE_EMBEDDING_MODEL', 'TOOLGATE_EMBEDDING_DIMENSIONS', 'TOOLGATE_EMBEDDING_BASE_URL'] as const).find(
      (name) => e[name] !== undefined,
    );
    if (set && !(set === 'TOOLGATE_EMBEDDING_MODEL' && model === NO_EMBEDDINGS)) {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_MODEL_ENV',
        `${set} is set, but the local model sends nothing anywhere and searches by words only: set TOOLGATE_MODEL_PROVIDER=openai, or unset ${set}.`,
      );
    }
    return undefined;
  }
  if (model === NO_EMBEDDINGS) return undefined;
  return new OpenAIEmbeddings({
    apiKey: apiKeyOf(e),
    baseURL: e.TOOLGATE_EMBEDDING_BASE_URL ?? e.TOOLGATE_MODEL_BASE_URL,
    model: model ?? DEFAULT_EMBEDDING_MODEL,
    ...(e.TOOLGATE_EMBEDDING_DIMENSIONS ? { dimensions: e.TOOLGATE_EMBEDDING_DIMENSIONS } : {}),
    timeoutMs: e.TOOLGATE_MODEL_TIMEOUT_MS,
  });
}

function readModelEnv(env: NodeJS.ProcessEnv): ModelEnv {
  const parsed = modelEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ToolgateConfigError('ERR_TOOLGATE_MODEL_ENV', `The language model settings are not valid: ${problems}.`);
  }
  return parsed.data;
}

function apiKeyOf(e: ModelEnv): string {
  const apiKey = e.TOOLGATE_MODEL_API_KEY ?? e.OPENAI_API_KEY;
  if (apiKey) return apiKey;
  throw new ToolgateConfigError(
    'ERR_TOOLGATE_MODEL_KEY',
    'TOOLGATE_MODEL_PROVIDER=openai needs an API key: set TOOLGATE_MODEL_API_KEY (or OPENAI_API_KEY), or unset TOOLGATE_MODEL_PROVIDER to use the local model.',
  );
}
