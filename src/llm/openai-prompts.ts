// What the OpenAI-compatible model is asked, and the structured-output schema its analysis must
// follow. Strict structured output requires every field, so an action item's `due` is null rather
// than absent on the wire; `fromWire` turns it back into HTTP.md's shape.
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { z } from 'zod';
import { NO_ANSWER, type ModelContext, type ModelSource } from './language-model';
import { emailCategorySchema, prioritySchema, sentimentSchema, type EmailAnalysis, type ModelEmail } from './schemas';

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
  return [
    `From: ${email.from}`,
    `Subject: ${email.subject ?? ''}`,
    `Reference date: ${referenceDay(email, ctx)}`,
    '',
    email.body,
  ].join('\n');
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

export function answerMessages(question: string, sources: ModelSource[], ctx: ModelContext): ChatCompletionMessageParam[] {
  const numbered = sources.map((s, i) => `[${i + 1}] ${s.title}\n${s.text}`).join('\n\n');
  return [
    system(ctx, `Answer the question only from the sources below. If they do not contain the answer, reply exactly: ${NO_ANSWER}`),
    { role: 'user', content: `Sources:\n\n${numbered}\n\nQuestion: ${question}` },
  ];
}

export function chatMessages(message: string, ctx: ModelContext): ChatCompletionMessageParam[] {
  return [system(ctx, 'Reply briefly to the message below.'), { role: 'user', content: message }];
}
