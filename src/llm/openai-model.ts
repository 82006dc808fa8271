// A LanguageModel over any OpenAI-compatible Chat Completions API, through the official `openai`
// client. The analysis uses structured output (a strict json_schema built from zod) and is checked
// against the zod schema again on arrival. Every failure becomes a ModelError.
//
// Retries are done here, not by the client: the client would sleep for whatever Retry-After the
// server sends, and `timeoutMs` must bound the whole call, retries and waits included.
import type OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { ToolgateConfigError } from '../errors';
import type { AgentStepRequest, AgentStepResult } from './agent-step';
import { ModelError, type LanguageModel, type ModelContext, type ModelSource } from './language-model';
import {
  agentMessages,
  agentTools,
  analysisMessages,
  answerMessages,
  chatMessages,
  fromWire,
  replyMessages,
  wireAnalysisSchema,
} from './openai-prompts';
import { emailAnalysisSchema, type EmailAnalysis, type ModelEmail } from './email-analysis';

export interface OpenAIModelOptions {
  apiKey: string;
  /** The API root, e.g. http://127.0.0.1:8080/v1; unset: the client's default (OpenAI's API). */
  baseURL?: string;
  model: string;
  /** The most one call may take, retries and waits included. */
  timeoutMs?: number;
  /** Further attempts after a connection failure, 408, 409, 429 or 5xx. */
  maxRetries?: number;
}

const DEFAULTS = { timeoutMs: 20_000, maxRetries: 1 };
/** The first wait between attempts; it doubles, and never outlasts the time left. */
const BACKOFF_MS = 200;
/** The client's own timeout is set this much later than ours, so ours always settles first. */
const CLIENT_TIMEOUT_MARGIN_MS = 1_000;
const RETRYABLE_STATUS = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;

/** The openai package's parts used here. It is an optional peer dependency: loaded when a model is made. */
interface OpenAISdk {
  OpenAI: typeof OpenAI;
  zodResponseFormat: typeof import('openai/helpers/zod').zodResponseFormat;
}

function loadOpenAISdk(): OpenAISdk {
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

export class OpenAIModel implements LanguageModel {
  readonly model: string;
  private readonly sdk: OpenAISdk;
  private readonly client: OpenAI;
  private readonly analysisFormat: ChatCompletionCreateParamsNonStreaming['response_format'];
  private readonly timeoutMs: number;
  private readonly maxRetries: number;

  constructor(options: OpenAIModelOptions) {
    this.sdk = loadOpenAISdk();
    this.analysisFormat = this.sdk.zodResponseFormat(wireAnalysisSchema, 'email_analysis');
    this.model = options.model;
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

  async analyzeEmail(email: ModelEmail, ctx: ModelContext): Promise<EmailAnalysis> {
    const content = await this.complete(analysisMessages(email, ctx), this.analysisFormat);
    let json: unknown;
    try {
      json = JSON.parse(content);
    } catch {
      throw new ModelError('invalid_output', 'The model answered with text that is not JSON, where the analysis schema was asked for.');
    }
    const wire = wireAnalysisSchema.safeParse(json);
    const checked = wire.success ? emailAnalysisSchema.safeParse(fromWire(wire.data)) : wire;
    if (!checked.success) {
      const problems = checked.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      throw new ModelError('invalid_output', `The model's analysis does not fit the schema: ${problems}.`);
    }
    return checked.data;
  }

  writeReply(email: ModelEmail, analysis: EmailAnalysis, ctx: ModelContext): Promise<string> {
    return this.complete(replyMessages(email, analysis, ctx));
  }

  answerQuestion(question: string, sources: ModelSource[], ctx: ModelContext): Promise<string> {
    return this.complete(answerMessages(question, sources, ctx));
  }

  chat(message: string, ctx: ModelContext): Promise<string> {
    return this.complete(chatMessages(message, ctx));
  }

  /**
   * One step of an agent run through Chat Completions' tool calling: the run's tools as functions,
   * the thread as messages. Several calls in one answer come back in the order the model wrote them.
   */
  async agentStep(request: AgentStepRequest): Promise<AgentStepResult> {
    const body: ChatCompletionCreateParamsNonStreaming = { model: this.model, messages: agentMessages(request) };
    if (request.tools.length > 0) body.tools = agentTools(request.tools);
    const message = await this.choiceMessage(body);
    const calls = (message.tool_calls ?? []).flatMap((call, index) =>
      call.type === 'function'
        ? [{ call_id: call.id || `call_${index}`, tool: call.function.name, arguments: call.function.arguments ?? '' }]
        : [],
    );
    if (calls.length > 0) return { kind: 'tool_calls', calls };
    const text = message.content?.trim();
    if (!text) throw new ModelError('invalid_output', 'The model answered with neither a tool call nor a reply.');
    return { kind: 'reply', text };
  }

  /** One completion's text, within the deadline; blank, refused or cut-off answers are failures. */
  private async complete(
    messages: ChatCompletionMessageParam[],
    responseFormat?: ChatCompletionCreateParamsNonStreaming['response_format'],
  ): Promise<string> {
    const body: ChatCompletionCreateParamsNonStreaming = { model: this.model, messages };
    if (responseFormat) body.response_format = responseFormat;
    const text = (await this.choiceMessage(body)).content?.trim();
    if (!text) throw new ModelError('invalid_output', 'The model answered with no text.');
    return text;
  }

  /** The first choice's message, within the deadline; a refused or cut-off answer is a failure. */
  private async choiceMessage(body: ChatCompletionCreateParamsNonStreaming): Promise<ChatCompletion.Choice['message']> {
    const completion = await this.withRetries((left) => this.attempt(body, left));
    const choice = completion.choices?.[0];
    if (!choice?.message) throw new ModelError('invalid_output', 'The model answered with no choices.');
    if (choice.message.refusal) throw new ModelError('invalid_output', 'The model refused to answer.');
    if (choice.finish_reason === 'length')
      throw new ModelError('invalid_output', 'The model ran out of tokens before finishing its answer.');
    return choice.message;
  }

  /**
   * One request, given `left` ms. The client's own timeout stops only at the response headers; a
   * server that sends headers and then stalls would hold the body read forever. So this call has
   * its own timer, which aborts the request and settles first (the client's is a backstop).
   */
  private async attempt(body: ChatCompletionCreateParamsNonStreaming, left: number): Promise<ChatCompletion> {
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(timedOut(this.timeoutMs));
      }, left);
    });
    try {
      const request = this.client.chat.completions.create(body, {
        timeout: left + CLIENT_TIMEOUT_MARGIN_MS,
        maxRetries: 0,
        signal: abort.signal,
      });
      return await Promise.race([request, expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async withRetries(attempt: (timeoutMs: number) => Promise<ChatCompletion>): Promise<ChatCompletion> {
    const deadline = Date.now() + this.timeoutMs;
    for (let tries = 0; ; tries++) {
      const left = deadline - Date.now();
      if (left < 1) throw timedOut(this.timeoutMs);
      try {
        return await attempt(Math.max(1, Math.floor(left)));
      } catch (err) {
        const failure = toModelError(this.sdk, err, this.timeoutMs);
        const wait = retryWait(this.sdk, err, tries);
        if (tries >= this.maxRetries || failure.kind !== 'upstream' || wait === null || Date.now() + wait >= deadline) throw failure;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
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
  return new ModelError('upstream', 'The model provider answered with something that is not a chat completion.');
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
