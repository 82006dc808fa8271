// Which language model the service runs, from the environment: the local model unless
// TOOLGATE_MODEL_PROVIDER=openai. A bad setting stops the start with a sentence naming the variable.
import { z } from 'zod';
import { ToolgateConfigError } from '../errors';
import type { LanguageModel } from './language-model';
import { LocalModel } from './local-model';
import { OpenAIModel } from './openai-model';

export const DEFAULT_MODEL_NAME = 'gpt-4o-mini';

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
});

export function createLanguageModel(env: NodeJS.ProcessEnv = process.env): LanguageModel {
  const parsed = modelEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ToolgateConfigError('ERR_TOOLGATE_MODEL_ENV', `The language model settings are not valid: ${problems}.`);
  }
  const e = parsed.data;
  if ((e.TOOLGATE_MODEL_PROVIDER ?? 'local') === 'local') return new LocalModel();
  const apiKey = e.TOOLGATE_MODEL_API_KEY ?? e.OPENAI_API_KEY;
  if (!apiKey) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_MODEL_KEY',
      'TOOLGATE_MODEL_PROVIDER=openai needs an API key: set TOOLGATE_MODEL_API_KEY (or OPENAI_API_KEY), or unset TOOLGATE_MODEL_PROVIDER to use the local model.',
    );
  }
  return new OpenAIModel({
    apiKey,
    baseURL: e.TOOLGATE_MODEL_BASE_URL,
    model: e.TOOLGATE_MODEL_NAME ?? DEFAULT_MODEL_NAME,
    timeoutMs: e.TOOLGATE_MODEL_TIMEOUT_MS,
  });
}
