// The message an email client posts (HTTP.md, Email): parsed once by the routes, and the parts the
// language model and task filing read from it.
import { z } from 'zod';
import { INPUT_BOUNDS } from '../core/input-bounds';
import { messageIdsOf } from '../core/message-ids';
import { addressBounds, authenticationResultsSchema, MAX_BODY_CHARS, text } from './fields';
import type { InboundMessage } from '../llm/agent-step';
import type { ModelEmail } from '../llm/email-analysis';
import type { TaskSource } from '../tasks/task-source';

const MAX_REFERENCES_CHARS = 100_000;

const addressList = z.union([text(1000), z.array(text(1000)).max(500, 'at most 500 recipients')]);

/** The message's fields, without the check across them (for a schema that picks some). */
export const emailMessageFields = z.strictObject({
  from: text(1000).refine((s) => s.trim() !== '', 'must not be empty'),
  to: addressList.optional(),
  cc: addressList.optional(),
  reply_to: text(1000).optional(),
  subject: text(2000).optional(),
  body: text(MAX_BODY_CHARS).refine((s) => s.trim() !== '', 'must not be empty'),
  message_id: text(998).optional(),
  // The thread it answers, as mail names it (SEMANTICS §11): In-Reply-To, and References as the
  // header's text or a list of Message-IDs.
  in_reply_to: text(998).optional(),
  references: z.union([text(MAX_REFERENCES_CHARS), z.array(text(998)).max(1000, 'at most 1000 Message-IDs')]).optional(),
  // The raw values of the message's Authentication-Results headers (SEMANTICS §7).
  authentication_results: authenticationResultsSchema.optional(),
  // The headers that mark an automatic reply (RFC 3834 and its kin): such a message never decides
  // an approval and never acts (SEMANTICS §12a).
  auto_submitted: text(200).optional(),
  precedence: text(200).optional(),
  x_autoreply: text(200).optional(),
  x_autorespond: text(200).optional(),
});

export const emailMessageSchema = emailMessageFields
  // Every address the routes read (the sender's key, participants, the greeting) within the parser's bounds.
  .superRefine((m, ctx) => {
    addressBounds({ from: m.from, to: m.to, cc: m.cc, reply_to: m.reply_to }, ctx);
    // Counted as read (linear): each id is a thread looked up by, and kept with the run. zod runs
    // this even when a field failed, so a value over the schema's size is left to that failure.
    if (withinSize(m.references) && messageIdsOf(m.references).length > INPUT_BOUNDS.references_count) {
      ctx.addIssue({
        code: 'custom',
        path: ['references'],
        message: `References names more than ${INPUT_BOUNDS.references_count} Message-IDs: send the newest ${INPUT_BOUNDS.references_count} at most (a thread is found by its newest); nothing was run.`,
        params: { bound: 'references_count' },
      });
    }
  });
function withinSize(references: unknown): references is string | string[] {
  if (typeof references === 'string') return references.length <= MAX_REFERENCES_CHARS;
  return Array.isArray(references) && references.length <= 1000 && references.every((r) => typeof r === 'string' && r.length <= 998);
}
export type EmailMessage = z.infer<typeof emailMessageSchema>;

export function modelEmail(message: EmailMessage): ModelEmail {
  return { from: message.from, subject: message.subject, body: message.body };
}

/**
 * The message as an agent run keeps it: who sent it and to whom, what it says, its Message-ID and
 * the ones it answers (References kept as a list, at most the latest 100: a thread is found by its
 * newest ids).
 */
export function inboundMessage(message: EmailMessage): InboundMessage {
  const references = messageIdsOf(message.references).slice(-100);
  return {
    from: message.from,
    ...(message.to !== undefined ? { to: listOf(message.to) } : {}),
    ...(message.cc !== undefined ? { cc: listOf(message.cc) } : {}),
    ...(message.reply_to !== undefined ? { reply_to: message.reply_to } : {}),
    body: message.body,
    ...(message.subject !== undefined ? { subject: message.subject } : {}),
    ...(message.message_id !== undefined ? { message_id: message.message_id } : {}),
    ...(message.in_reply_to !== undefined ? { in_reply_to: message.in_reply_to } : {}),
    ...(references.length > 0 ? { references } : {}),
    ...(message.auto_submitted !== undefined ? { auto_submitted: message.auto_submitted } : {}),
    ...(message.precedence !== undefined ? { precedence: message.precedence } : {}),
    ...(message.x_autoreply !== undefined ? { x_autoreply: message.x_autoreply } : {}),
    ...(message.x_autorespond !== undefined ? { x_autorespond: message.x_autorespond } : {}),
  };
}

function listOf(value: string | string[]): string[] {
  return typeof value === 'string' ? [value] : value;
}

export function taskSource(message: Pick<InboundMessage, 'message_id' | 'from' | 'subject' | 'body'>): TaskSource {
  return { message_id: message.message_id ?? null, from: message.from, subject: message.subject ?? null, body: message.body };
}
