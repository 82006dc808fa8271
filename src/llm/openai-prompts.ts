// What the OpenAI-compatible model is asked, and the structured-output schema its analysis must
// follow. Strict structured output requires every field, so an action item's `due` is null rather
// than absent on the wire; `fromWire` turns it back into HTTP.md's shape.
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { z } from 'zod';
import type { RunDecisions } from '../core/run-decisions';
import type { AgentStepRequest, AgentToolSpec, InboundMessage } from './agent-step';
import type { ModelContext, ModelSource } from './language-model';
import { emailCategorySchema, prioritySchema, sentimentSchema, type EmailAnalysis, type ModelEmail } from './email-analysis';

export const wireAnalysisSchema = z.object({
  summary: z.string().describe('One or two sentences on what the sender says and wants.'),
  category: emailCategorySchema,
  priority: prioritySchema,
  sentiment: sentimentSchema.describe("The sender's tone."),
  action_items: z
    .array(
      z.object({
        title: z.string().describe('What the reader is asked to do, in at most 120 characters.'),
        due: z.string().nullable().describe('The date it is asked for, as YYYY-MM-DD resolved against the reference date, or null.'),
      }),
    )
    .describe('Only what the sender asks the reader to do; none for newsletters and automatic replies.'),
  suggested_reply: z.string().describe('A short, polite reply, signed with your name.'),
});
export type WireAnalysis = z.infer<typeof wireAnalysisSchema>;

export function fromWire(wire: WireAnalysis): unknown {
  return {
    ...wire,
    action_items: wire.action_items.map(({ title, due }) => (due === null ? { title } : { title, due })),
  };
}

function system(ctx: ModelContext, task: string): ChatCompletionMessageParam {
  const persona = `You are ${ctx.agentName}, an assistant that handles email.`;
  return { role: 'system', content: [persona, ctx.systemPrompt?.trim(), task].filter(Boolean).join('\n\n') };
}

function referenceDay(email: ModelEmail, ctx: ModelContext): string {
  return (email.received_at ?? ctx.now).toISOString().slice(0, 10);
}

function emailBlock(email: ModelEmail, ctx: ModelContext): string {
  return [`From: ${email.from}`, `Subject: ${email.subject ?? ''}`, `Reference date: ${referenceDay(email, ctx)}`, '', email.body].join(
    '\n',
  );
}

export function analysisMessages(email: ModelEmail, ctx: ModelContext): ChatCompletionMessageParam[] {
  return [
    system(
      ctx,
      'Analyze the email below. Resolve relative dates ("by Friday") against its reference date, and ignore quoted earlier messages. Answer in the JSON schema given.',
    ),
    { role: 'user', content: emailBlock(email, ctx) },
  ];
}

export function replyMessages(email: ModelEmail, analysis: EmailAnalysis, ctx: ModelContext): ChatCompletionMessageParam[] {
  return [
    system(ctx, 'Write the reply to the email below, using its analysis. Answer with the reply text only, signed with your name.'),
    { role: 'user', content: `${emailBlock(email, ctx)}\n\nAnalysis:\n${JSON.stringify(analysis, null, 2)}` },
  ];
}

/** The grounded answer on the wire: the text, and the numbers of the sources it stands on. */
export const groundedAnswerSchema = z.object({
  answered: z.boolean().describe('false when the sources do not hold the answer.'),
  answer: z.string().describe('The answer, from the sources only; empty when answered is false.'),
  sources: z.array(z.number().int()).describe('The numbers of the sources the answer uses, e.g. [1, 3]; empty when answered is false.'),
});

export function answerMessages(question: string, sources: ModelSource[], ctx: ModelContext): ChatCompletionMessageParam[] {
  const numbered = sources.map((s, i) => `[${i + 1}] ${s.title}\n${s.text}`).join('\n\n');
  return [
    system(
      ctx,
      [
        'Answer the question only from the numbered sources below, never from what you know otherwise.',
        'List the numbers of the sources your answer uses. If the sources do not hold the answer, set answered to false.',
        'Answer in the JSON schema given.',
      ].join(' '),
    ),
    { role: 'user', content: `Sources:\n\n${numbered}\n\nQuestion: ${question}` },
  ];
}

export function chatMessages(message: string, ctx: ModelContext): ChatCompletionMessageParam[] {
  return [system(ctx, 'Reply briefly to the message below.'), { role: 'user', content: message }];
}

const AGENT_TASK = [
  'You handle the messages of one thread, for whoever writes the last one.',
  "Use the tools you are offered when they help. Each tool call is checked against what this message's sender may use: a refused call did not happen, and you must never claim it did.",
  'A tool marked as needing approval does not run when you call it: the call is filed as a request for an approver, and you must say it is awaiting approval, never that it is done.',
  'You never approve or refuse a request: the system reads each message for decisions before you see it and tells you what it decided. Calling the tool of a pending request does not decide it.',
  'When you are done, answer with the reply to the last message, signed with your name.',
].join(' ');

function inboundBlock(message: InboundMessage): string {
  const to = message.to?.length ? [`To: ${message.to.slice(0, 20).join(', ')}`] : [];
  const cc = message.cc?.length ? [`Cc: ${message.cc.slice(0, 20).join(', ')}`] : [];
  return [`From: ${message.from}`, ...to, ...cc, `Subject: ${message.subject ?? ''}`, '', message.body].join('\n');
}

const NEEDS_APPROVAL_NOTE = ' Needs approval for this sender: calling it files a request for an approver to decide; it does not run now.';

/** The run's tools in the Chat Completions shape: the id as the function's name. */
export function agentTools(tools: readonly AgentToolSpec[]): ChatCompletionFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: {
      name: tool.id,
      description: `${tool.display_name}: ${tool.summary}${tool.needs_approval ? NEEDS_APPROVAL_NOTE : ''}`,
      parameters: tool.input_schema,
    },
  }));
}

/** The thread as Chat Completions messages: calls made together share one assistant message. */
export function agentMessages({ context, turns }: AgentStepRequest): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [system(context, AGENT_TASK)];
  for (const turn of turns) {
    switch (turn.role) {
      case 'inbound':
        messages.push({ role: 'user', content: inboundBlock(turn.message) });
        break;
      case 'instruction':
        messages.push({ role: 'user', content: turn.text });
        break;
      case 'tool_call': {
        const call = { id: turn.call_id, type: 'function' as const, function: { name: turn.tool, arguments: turn.arguments } };
        const last = messages[messages.length - 1] as ChatCompletionAssistantMessageParam | undefined;
        if (last?.role === 'assistant' && last.tool_calls) last.tool_calls.push(call);
        else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
        break;
      }
      case 'tool_result':
        messages.push({
          role: 'tool',
          tool_call_id: turn.call_id,
          content: JSON.stringify(
            turn.status === 'success' || turn.status === 'pending_approval'
              ? { status: turn.status, output: turn.output ?? null }
              : { status: turn.status, error: turn.error ?? null },
          ),
        });
        break;
      case 'reply':
        messages.push({ role: 'assistant', content: turn.text });
        break;
      case 'decision':
        messages.push({ role: 'system', content: decisionNote(turn) });
        break;
    }
  }
  return messages;
}

/** What the system decided of approval requests from the message before: the model reads it as fact, and never the codes. */
function decisionNote(decisions: RunDecisions): string {
  const call = (tool: string, input: unknown) => `${tool} ${JSON.stringify(input ?? {})}`;
  const lines = decisions.decided.map((d) =>
    d.status === 'denied'
      ? `Request ${d.request_id} (${call(d.tool, d.input)}) was denied: it will not run.`
      : `Request ${d.request_id} (${call(d.tool, d.input)}) was approved and ran once: ${JSON.stringify(d.result ?? null)}.`,
  );
  for (const u of decisions.undecided) lines.push(`Request ${u.request_id} (${call(u.tool, u.input)}) is still pending: ${u.reason}.`);
  return [
    'Approval decisions the system read in the message above (the approver decides, not you):',
    ...lines,
    'Only what is listed as approved ran. Say so in your reply, and do not call a tool to carry out a pending request.',
  ].join('\n');
}
