// A LanguageModel over any OpenAI-compatible Chat Completions API, through the official `openai`
// client (openai-client.ts: the deadline, the retries, the errors). The analysis uses structured
// output (a strict json_schema built from zod) and is checked against the zod schema again on arrival.
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { AgentStepRequest, AgentStepResult } from './agent-step';
import { ModelError, type GroundedAnswer, type LanguageModel, type ModelContext, type ModelSource } from './language-model';
import { reportAnswer, type ModelAnswer } from './model-answer';
import { OpenAIClient } from './openai-client';
import type { OpenAIClientOptions } from './openai-options';
import {
  agentMessages,
  agentTools,
  analysisMessages,
  answerMessages,
  chatMessages,
  fromWire,
  groundedAnswerSchema,
  replyMessages,
  wireAnalysisSchema,
} from './openai-prompts';
import { emailAnalysisSchema, type EmailAnalysis, type ModelEmail } from './email-analysis';

export interface OpenAIModelOptions extends OpenAIClientOptions {
  model: string;
}

export class OpenAIModel implements LanguageModel {
  /** How a trace names this model's provider: any OpenAI-compatible API speaks OpenAI's protocol. */
  readonly provider = 'openai';
  readonly model: string;
  private readonly api: OpenAIClient;
  private readonly analysisFormat: ChatCompletionCreateParamsNonStreaming['response_format'];
  private readonly answerFormat: ChatCompletionCreateParamsNonStreaming['response_format'];

  constructor(options: OpenAIModelOptions) {
    this.api = new OpenAIClient(options);
    this.analysisFormat = this.api.sdk.zodResponseFormat(wireAnalysisSchema, 'email_analysis');
    this.answerFormat = this.api.sdk.zodResponseFormat(groundedAnswerSchema, 'grounded_answer');
    this.model = options.model;
  }

  async analyzeEmail(email: ModelEmail, ctx: ModelContext): Promise<EmailAnalysis> {
    const json = parsedJson(await this.complete(analysisMessages(email, ctx), this.analysisFormat), 'the analysis schema');
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

  /** Structured output: what the answer says, and which of the numbered sources it stands on. */
  async answerQuestion(question: string, sources: ModelSource[], ctx: ModelContext): Promise<GroundedAnswer> {
    const json = parsedJson(await this.complete(answerMessages(question, sources, ctx), this.answerFormat), 'a grounded answer');
    const wire = groundedAnswerSchema.safeParse(json);
    if (!wire.success) throw new ModelError('invalid_output', "The model's answer does not fit the grounded answer schema.");
    const cited = [...new Set(wire.data.sources)].filter((n) => n >= 1 && n <= sources.length).map((n) => n - 1);
    const text = wire.data.answer.trim();
    // An answer that names no source it was given is not grounded in them: it is no answer.
    if (!wire.data.answered || !text || cited.length === 0) return { answered: false, text: '', cited: [] };
    return { answered: true, text, cited };
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
    const completion: ChatCompletion = await this.api.call((client, attempt) => client.chat.completions.create(body, attempt));
    // Told before the answer is checked, so a call cut off or refused still says why and what it cost.
    reportAnswer(answerOf(completion));
    const choice = completion.choices?.[0];
    if (!choice?.message) throw new ModelError('invalid_output', 'The model answered with no choices.');
    if (choice.message.refusal) throw new ModelError('invalid_output', 'The model refused to answer.');
    if (choice.finish_reason === 'length')
      throw new ModelError('invalid_output', 'The model ran out of tokens before finishing its answer.');
    return choice.message;
  }
}

/** What the completion says of itself, for the call's span: only the parts the provider sent. */
function answerOf(completion: ChatCompletion): ModelAnswer {
  const reasons = (completion.choices ?? []).flatMap((c) => (typeof c.finish_reason === 'string' ? [c.finish_reason] : []));
  const usage = completion.usage;
  return {
    ...(typeof completion.model === 'string' ? { responseModel: completion.model } : {}),
    ...(typeof completion.id === 'string' ? { responseId: completion.id } : {}),
    ...(reasons.length > 0 ? { finishReasons: reasons } : {}),
    ...(typeof usage?.prompt_tokens === 'number' ? { inputTokens: usage.prompt_tokens } : {}),
    ...(typeof usage?.completion_tokens === 'number' ? { outputTokens: usage.completion_tokens } : {}),
  };
}

/** A structured answer's JSON; text that is not JSON is the model's failure, named for what was asked. */
function parsedJson(content: string, asked: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    throw new ModelError('invalid_output', `The model answered with text that is not JSON, where ${asked} was asked for.`);
  }
}
