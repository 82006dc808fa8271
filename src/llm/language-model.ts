// The one small interface behind analysis, replies, answers and chat, and the one error a model
// may throw. Routes depend on this file only; which implementation runs is configuration.
import { UpstreamError } from '../errors';
import type { AgentStepRequest, AgentStepResult } from './agent-step';
import type { ModelContext } from './model-context';

export { modelContext, type ModelContext } from './model-context';
import type { EmailAnalysis, ModelEmail } from './email-analysis';

/** What an answer says when its sources hold none: both implementations use this sentence. */
export const NO_ANSWER = 'The documents do not answer this question.';

/** A passage the model may answer from. */
export interface ModelSource {
  title: string;
  text: string;
}

/**
 * An answer that says which sources it stands on: `cited` are indexes into the sources given.
 * `answered: false` when the sources do not hold the answer (then `text` and `cited` are empty).
 */
export interface GroundedAnswer {
  answered: boolean;
  text: string;
  cited: number[];
}

export interface LanguageModel {
  /**
   * How a trace names the model's provider (`gen_ai.provider.name`) and the model asked for
   * (`gen_ai.request.model`), both optional: a model that names neither is traced as `toolgate.host`.
   */
  readonly provider?: string;
  readonly model?: string;
  analyzeEmail(email: ModelEmail, ctx: ModelContext): Promise<EmailAnalysis>;
  writeReply(email: ModelEmail, analysis: EmailAnalysis, ctx: ModelContext): Promise<string>;
  /**
   * An answer from the sources only. A plain string is an answer drawn from all of them (the local
   * model's extractive answer); a GroundedAnswer names the ones it used.
   */
  answerQuestion(question: string, sources: ModelSource[], ctx: ModelContext): Promise<string | GroundedAnswer>;
  chat(message: string, ctx: ModelContext): Promise<string>;
  /** One step of an agent run: call some of the offered tools, or reply (SEMANTICS §10). */
  agentStep(request: AgentStepRequest): Promise<AgentStepResult>;
}

/**
 * - `upstream`: the provider answered with an error, or could not be reached;
 * - `timeout`: no answer within the configured time (retries included);
 * - `invalid_output`: an answer came, but not in the shape asked for.
 */
export type ModelErrorKind = 'upstream' | 'timeout' | 'invalid_output';

/** The only error a LanguageModel throws: a failed stage, never a 500. */
export class ModelError extends Error {
  readonly kind: ModelErrorKind;
  constructor(kind: ModelErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ModelError';
    this.kind = kind;
  }
}

export function isModelError(err: unknown): err is ModelError {
  return err instanceof ModelError;
}

/** How a gate stage reports a failed model: 502 `upstream_error`, with the model's sentence. */
function toUpstreamError(err: ModelError): UpstreamError {
  return new UpstreamError(`The language model failed (${err.kind}): ${err.message}`);
}

/** Awaits work that asks the model; a model failure becomes the 502 a gate stage answers with. */
export async function orUpstreamError<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw isModelError(err) ? toUpstreamError(err) : err;
  }
}
