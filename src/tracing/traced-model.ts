// Every call toolgate makes to a language model as a GenAI `chat` span (SEMANTICS §16): one wrapper
// around whichever model the deployment gave (the OpenAI-compatible client, the local model, a
// host's own), so an agent run's steps, an email's analysis and its reply are each a child of
// whatever span is active when they are asked: the run's `invoke_agent`, a tool's `execute_tool`.
//
// What the answer says of itself (the model that answered, why it stopped, the tokens it used) is
// what the model reports (model-answer.ts); the prompt and the answer's text only with content on.
// Nothing is computed for a span that is not recording.
import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { AgentStepRequest, AgentStepResult, AgentTurn } from '../llm/agent-step';
import type { EmailAnalysis, ModelEmail } from '../llm/email-analysis';
import { isModelError, type GroundedAnswer, type LanguageModel, type ModelContext, type ModelSource } from '../llm/language-model';
import { listeningForAnswers, type ModelAnswer } from '../llm/model-answer';
import { json, messageList, type SpanMessage } from './span-content';
import { TRACER_NAME } from './toolgate-tracing';
import type { TracingSettings } from './tracing-options';

/** The provider named for a model that names none: a host's own. */
export const HOST_PROVIDER = 'toolgate.host';

/** Which of the interface's calls a span is, as `toolgate.model.call` says it. */
type ModelCall = 'analyze_email' | 'write_reply' | 'answer_question' | 'chat' | 'agent_step';

/** What a call sent and what came back, as messages: built only when content is on and the span records. */
interface CallContent<T> {
  input(): SpanMessage[];
  output(answer: T): SpanMessage[];
}

/** The model, each of its calls a `chat` span. */
export function tracedModel(model: LanguageModel, settings: TracingSettings): LanguageModel {
  return new TracedModel(model, settings);
}

class TracedModel implements LanguageModel {
  readonly provider: string;
  readonly model: string | undefined;
  readonly #inner: LanguageModel;
  readonly #settings: TracingSettings;
  readonly #tracer: Tracer;
  readonly #name: string;

  constructor(inner: LanguageModel, settings: TracingSettings) {
    this.#inner = inner;
    this.#settings = settings;
    // The API's proxy, as toolgate's other spans: whichever provider the host registers.
    this.#tracer = trace.getTracer(TRACER_NAME);
    this.provider = inner.provider ?? HOST_PROVIDER;
    this.model = inner.model;
    this.#name = this.model === undefined ? 'chat' : `chat ${this.model}`;
  }

  analyzeEmail(email: ModelEmail, ctx: ModelContext): Promise<EmailAnalysis> {
    return this.#call('analyze_email', ctx, () => this.#inner.analyzeEmail(email, ctx), {
      input: () => [userText(emailText(email))],
      output: (analysis) => [assistantText(json(analysis))],
    });
  }

  writeReply(email: ModelEmail, analysis: EmailAnalysis, ctx: ModelContext): Promise<string> {
    return this.#call('write_reply', ctx, () => this.#inner.writeReply(email, analysis, ctx), {
      input: () => [userText(emailText(email))],
      output: (reply) => [assistantText(reply)],
    });
  }

  answerQuestion(question: string, sources: ModelSource[], ctx: ModelContext): Promise<string | GroundedAnswer> {
    return this.#call('answer_question', ctx, () => this.#inner.answerQuestion(question, sources, ctx), {
      input: () => [
        {
          role: 'user',
          parts: [
            { type: 'text', content: question },
            ...sources.map((s) => ({ type: 'text' as const, content: `${s.title}\n${s.text}` })),
          ],
        },
      ],
      output: (answer) => [assistantText(typeof answer === 'string' ? answer : answer.text)],
    });
  }

  chat(message: string, ctx: ModelContext): Promise<string> {
    return this.#call('chat', ctx, () => this.#inner.chat(message, ctx), {
      input: () => [userText(message)],
      output: (reply) => [assistantText(reply)],
    });
  }

  agentStep(request: AgentStepRequest): Promise<AgentStepResult> {
    return this.#call('agent_step', request.context, () => this.#inner.agentStep(request), {
      input: () => request.turns.map(turnMessage),
      output: (result) => [stepMessage(result)],
    });
  }

  /** `ask` within its span, the span told the answer's report; its failure the span's error. */
  async #call<T>(call: ModelCall, ctx: ModelContext, ask: () => Promise<T>, content: CallContent<T>): Promise<T> {
    const span = this.#tracer.startSpan(this.#name, { kind: SpanKind.CLIENT });
    if (!span.isRecording()) {
      span.end();
      return ask();
    }
    span.setAttributes({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': this.provider,
      ...(this.model === undefined ? {} : { 'gen_ai.request.model': this.model }),
      'toolgate.model.call': call,
    });
    if (this.#settings.content) {
      if (ctx.systemPrompt) span.setAttribute('gen_ai.system_instructions', json([{ type: 'text', content: ctx.systemPrompt }]));
      span.setAttribute('gen_ai.input.messages', messageList(content.input()));
    }
    const within = listeningForAnswers(trace.setSpan(context.active(), span), (answer) => answered(span, answer));
    try {
      const answer = await context.with(within, ask);
      if (this.#settings.content) span.setAttribute('gen_ai.output.messages', messageList(content.output(answer)));
      return answer;
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      // A model's failure by its kind (upstream, timeout, invalid_output); anything else by its name.
      span.setAttribute('error.type', isModelError(err) ? err.kind : err instanceof Error ? err.name : 'Error');
      throw err;
    } finally {
      span.end();
    }
  }
}

/** The answer's report as GenAI attributes; a call that retried reports its last answer. */
function answered(span: Span, answer: ModelAnswer): void {
  span.setAttributes({
    ...(answer.responseModel === undefined ? {} : { 'gen_ai.response.model': answer.responseModel }),
    ...(answer.responseId === undefined ? {} : { 'gen_ai.response.id': answer.responseId }),
    ...(answer.finishReasons === undefined ? {} : { 'gen_ai.response.finish_reasons': [...answer.finishReasons] }),
    ...(answer.inputTokens === undefined ? {} : { 'gen_ai.usage.input_tokens': answer.inputTokens }),
    ...(answer.outputTokens === undefined ? {} : { 'gen_ai.usage.output_tokens': answer.outputTokens }),
  });
}

/** An email as the model reads it: its subject and body. The sender is named only as the routing key setting says, so not here. */
function emailText(email: ModelEmail): string {
  return email.subject ? `${email.subject}\n\n${email.body}` : email.body;
}

function userText(text: string): SpanMessage {
  return { role: 'user', parts: [{ type: 'text', content: text }] };
}

function assistantText(text: string): SpanMessage {
  return { role: 'assistant', parts: [{ type: 'text', content: text }] };
}

/** One turn of a run's conversation as the GenAI conventions write a message. */
function turnMessage(turn: AgentTurn): SpanMessage {
  switch (turn.role) {
    case 'inbound':
      return userText(emailText(turn.message));
    case 'instruction':
      return userText(turn.text);
    case 'decision':
      return userText(json({ decided: turn.decided, undecided: turn.undecided }));
    case 'tool_call':
      return { role: 'assistant', parts: [{ type: 'tool_call', id: turn.call_id, name: turn.tool, arguments: turn.arguments }] };
    case 'tool_result':
      return {
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: turn.call_id, response: json(turn.output ?? turn.error ?? turn.status) }],
      };
    case 'reply':
      return assistantText(turn.text);
  }
}

function stepMessage(result: AgentStepResult): SpanMessage {
  if (result.kind === 'reply') return assistantText(result.text);
  return {
    role: 'assistant',
    parts: result.calls.map((c) => ({ type: 'tool_call' as const, id: c.call_id, name: c.tool, arguments: c.arguments })),
  };
}
