// The default language model: deterministic, offline and fast. Pure computation over the message
// with well-kept NLP packages (sbd for sentences, chrono-node for dates, sentiment for tone,
// compromise for imperatives, Porter2 stems for terms); the same input always gives the same
// output. It does not read the agent's system prompt: templates cannot follow instructions.
import type { AgentStepRequest, AgentStepResult } from './agent-step';
import { ModelError, type LanguageModel, type ModelContext, type ModelSource } from './language-model';
import { planAgentStep } from './local/agent-planner';
import { actionItems } from './local/requests';
import { categoryOf, isMachineMail, priorityOf, type Signals } from './local/classify';
import { ownText, sentencesOf } from './local/email-text';
import { extractiveAnswer } from './local/extractive-answer';
import { chatReply, fullReply, suggestedReply } from './local/reply-text';
import { senderOf } from './local/sender';
import { summarize } from './local/summary';
import { toneOf, toneScore } from './local/tone';
import { emailAnalysisSchema, type EmailAnalysis, type ModelEmail } from './email-analysis';

export class LocalModel implements LanguageModel {
  /** How a trace names it: toolgate's own, run in this process. */
  readonly provider: string = 'toolgate.local';
  readonly model: string = 'toolgate-local';

  async analyzeEmail(email: ModelEmail, ctx: ModelContext): Promise<EmailAnalysis> {
    return guarded(() => analyze(email, ctx));
  }

  async writeReply(email: ModelEmail, analysis: EmailAnalysis, ctx: ModelContext): Promise<string> {
    return guarded(() => fullReply(senderOf(email.from).firstName, email.subject ?? '', analysis, ctx.agentName));
  }

  async answerQuestion(question: string, sources: ModelSource[], _ctx: ModelContext): Promise<string> {
    return guarded(() => extractiveAnswer(question, sources));
  }

  async chat(message: string, ctx: ModelContext): Promise<string> {
    return guarded(() => chatReply(message, ctx.agentName));
  }

  /** A rule-based planner (local/agent-planner.ts): the seed's scenario, offline and deterministic. */
  async agentStep(request: AgentStepRequest): Promise<AgentStepResult> {
    return guarded(() => planAgentStep(request));
  }
}

/** A fault in a parsing package on some odd input fails the stage (a ModelError), never the request. */
function guarded<T>(work: () => T): T {
  try {
    return work();
  } catch (err) {
    if (err instanceof ModelError) throw err;
    throw new ModelError(
      'invalid_output',
      `The local model could not process this input: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** The analysis, synchronously: every step is a pure function of the message and the reference date. */
export function analyze(email: ModelEmail, ctx: ModelContext): EmailAnalysis {
  const subject = email.subject ?? '';
  const sender = senderOf(email.from);
  const sentences = sentencesOf(ownText(email.body));
  const signals: Signals = { subject, sentences, rawBody: email.body, senderLocal: sender.local };
  const reference = email.received_at && !Number.isNaN(email.received_at.getTime()) ? email.received_at : ctx.now;
  const score = toneScore(`${subject}. ${sentences.join(' ')}`);
  const category = categoryOf(signals, score);
  // Bulk mail and auto-replies ask nothing of this reader, whatever their calls to action say.
  const items = isMachineMail(signals) ? [] : actionItems(sentences, reference);
  const checked = emailAnalysisSchema.safeParse({
    summary: summarize(subject, sentences),
    category,
    priority: priorityOf(category, signals, items, reference),
    sentiment: toneOf(score),
    action_items: items,
    suggested_reply: suggestedReply(sender.firstName, subject, category, items, ctx.agentName),
  });
  // Unreachable by construction; if a template ever breaks the shape, the stage fails, not the request.
  if (!checked.success)
    throw new ModelError(
      'invalid_output',
      `The local analysis broke its own schema: ${checked.error.issues.map((i) => i.message).join('; ')}`,
    );
  return checked.data;
}
