// What every call to an OpenAI-compatible API shares, chat or embeddings: the official client,
// loaded when first needed; one deadline for the whole call, retries and waits included; and every
// failure turned into a ModelError whose sentence never repeats the provider's text.
//
// Retries are done here, not by the client: the client would sleep for whatever Retry-After the
// server sends, and the deadline must bound the whole call.
import type OpenAI from 'openai';
import { ToolgateConfigError } from '../errors';
import { ModelError } from './language-model';
import type { OpenAIClientOptions } from './openai-options';

/** What one attempt is given: its own abort signal, and the time left for it. */
export interface Attempt {
  signal: AbortSignal;
  timeout: number;
  maxRetries: 0;
}

const DEFAULTS = { timeoutMs: 20_000, maxRetries: 1 };
/** The first wait between attempts; it doubles, and never outlasts the time left. */
const BACKOFF_MS = 200;
/** The client's own timeout is set this much later than ours, so ours always settles first. */
const CLIENT_TIMEOUT_MARGIN_MS = 1_000;
const RETRYABLE_STATUS = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;

/** The openai package's parts used here. It is an optional peer dependency: loaded when a client is made. */
export interface OpenAISdk {
  OpenAI: typeof OpenAI;
  zodResponseFormat: typeof import('openai/helpers/zod').zodResponseFormat;
}

export function loadOpenAISdk(): OpenAISdk {
  try {
    /* eslint-disable @typescript-eslint/no-require-imports */
    return {
      OpenAI: (require('openai') as typeof import('openai')).OpenAI,
      zodResponseFormat: (require('openai/helpers/zod') as typeof import('openai/helpers/zod')).zodResponseFormat,
    };
    /* eslint-enable @typescript-eslint/no-require-imports */
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw err;
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_OPENAI_MISSING',
      'OpenAIModel needs the openai package, which toolgate does not install for you: npm install openai@6.',
    );
  }
}

export class OpenAIClient {
  readonly sdk: OpenAISdk;
  readonly client: OpenAI;
  readonly timeoutMs: number;
  private readonly maxRetries: number;

  constructor(options: OpenAIClientOptions) {
    this.sdk = loadOpenAISdk();
    this.timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
    this.maxRetries = options.maxRetries ?? DEFAULTS.maxRetries;
    // logLevel off: the client's own logs could carry request details; ours never carry the key.
    this.client = new this.sdk.OpenAI({
      apiKey: options.apiKey,
      baseURL: options.baseURL,
      maxRetries: 0,
      timeout: this.timeoutMs,
      logLevel: 'off',
    });
  }

  /**
   * `send` made once per attempt, within the deadline. The client's own timeout stops only at the
   * response headers; a server that sends headers and then stalls would hold the body read forever.
   * So each attempt has its own timer, which aborts the request and settles first.
   */
  async call<T>(send: (client: OpenAI, attempt: Attempt) => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.timeoutMs;
    for (let tries = 0; ; tries++) {
      const left = deadline - Date.now();
      if (left < 1) throw timedOut(this.timeoutMs);
      try {
        return await this.attempt(send, Math.max(1, Math.floor(left)));
      } catch (err) {
        const failure = toModelError(this.sdk, err, this.timeoutMs);
        const wait = retryWait(this.sdk, err, tries);
        if (tries >= this.maxRetries || failure.kind !== 'upstream' || wait === null || Date.now() + wait >= deadline) throw failure;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  private async attempt<T>(send: (client: OpenAI, attempt: Attempt) => Promise<T>, left: number): Promise<T> {
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(timedOut(this.timeoutMs));
      }, left);
    });
    try {
      const request = send(this.client, { signal: abort.signal, timeout: left + CLIENT_TIMEOUT_MARGIN_MS, maxRetries: 0 });
      return await Promise.race([request, expired]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function timedOut(timeoutMs: number): ModelError {
  return new ModelError('timeout', `The model did not answer within ${timeoutMs} ms.`);
}

/** Sentences built from the status and error code only: the provider's text may echo the key. */
function toModelError({ OpenAI }: OpenAISdk, err: unknown, timeoutMs: number): ModelError {
  if (err instanceof ModelError) return err;
  if (err instanceof OpenAI.APIConnectionTimeoutError) return timedOut(timeoutMs);
  if (err instanceof OpenAI.APIConnectionError) return new ModelError('upstream', 'The model provider could not be reached.');
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const code = typeof err.code === 'string' && /^[\w.-]{1,64}$/.test(err.code) ? ` (${err.code})` : '';
    return new ModelError('upstream', `The model provider answered HTTP ${err.status}${code}.`);
  }
  return new ModelError('upstream', 'The model provider answered with something that is not what was asked for.');
}

/** How long to wait before the next attempt, or null when the failure is not worth retrying. */
function retryWait({ OpenAI }: OpenAISdk, err: unknown, tries: number): number | null {
  const backoff = BACKOFF_MS * 2 ** tries;
  if (err instanceof OpenAI.APIConnectionTimeoutError) return null;
  if (err instanceof OpenAI.APIConnectionError) return backoff;
  if (!(err instanceof OpenAI.APIError) || typeof err.status !== 'number' || !RETRYABLE_STATUS(err.status)) return null;
  const asked = Number(err.headers?.get('retry-after-ms') ?? NaN) || Number(err.headers?.get('retry-after') ?? NaN) * 1000;
  return Number.isFinite(asked) && asked >= 0 ? asked : backoff;
}
