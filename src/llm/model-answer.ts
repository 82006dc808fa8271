// What a model's answer says of itself (the model that answered, why it stopped, the tokens it
// used), told to the span of the call that asked (SEMANTICS §16). A model reports it where it reads
// the answer; only a traced call listens, through its own OpenTelemetry context, so an untraced call
// and a model called outside toolgate report to no one, and no state is shared between calls.
import { createContextKey, context, type Context } from '@opentelemetry/api';

/** What an answer says of itself: each part only where the provider says it. */
export interface ModelAnswer {
  /** The model that answered, which may be more precise than the one asked for. */
  responseModel?: string;
  responseId?: string;
  /** Why each choice stopped (`stop`, `length`, `tool_calls`, ...). */
  finishReasons?: readonly string[];
  inputTokens?: number;
  outputTokens?: number;
}

export type AnswerListener = (answer: ModelAnswer) => void;

const LISTENER = createContextKey('toolgate.model_answer');

/** The context `base` with a listener for the answers reported within it. */
export function listeningForAnswers(base: Context, listen: AnswerListener): Context {
  return base.setValue(LISTENER, listen);
}

/** Tells the call that asked what its answer said of itself; nothing when no traced call listens. */
export function reportAnswer(answer: ModelAnswer): void {
  const listen = context.active().getValue(LISTENER) as AnswerListener | undefined;
  listen?.(answer);
}
