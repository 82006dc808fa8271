// The message an email client posts (HTTP.md, Email): parsed once by the routes, and the parts the
// language model and task filing read from it.
import { z } from 'zod';
import { authenticationResultsSchema, MAX_BODY_CHARS, text } from '../http/schemas';
import type { InboundMessage } from '../llm/agent-step';
import type { ModelEmail } from '../llm/schemas';
import type { TaskSource } from '../tasks/schemas';

const addressList = z.union([text(1000), z.array(text(1000)).max(500, 'at most 500 recipients')]);

export const emailMessageSchema = z.strictObject({
  from: text(1000).refine((s) => s.trim() !== '', 'must not be empty'),
  to: addressList.optional(),
  cc: addressList.optional(),
  reply_to: text(1000).optional(),
  subject: text(2000).optional(),
  body: text(MAX_BODY_CHARS).refine((s) => s.trim() !== '', 'must not be empty'),
  message_id: text(998).optional(),
  // The raw values of the message's Authentication-Results headers (SEMANTICS §7).
  authentication_results: authenticationResultsSchema.optional(),
});
export type EmailMessage = z.infer<typeof emailMessageSchema>;

export function modelEmail(message: EmailMessage): ModelEmail {
  return { from: message.from, subject: message.subject, body: message.body };
}

/** The message as an agent run keeps it: who sent it, what it says, and its Message-ID. */
export function inboundMessage(message: EmailMessage): InboundMessage {
  return {
    from: message.from,
    body: message.body,
    ...(message.subject !== undefined ? { subject: message.subject } : {}),
    ...(message.message_id !== undefined ? { message_id: message.message_id } : {}),
  };
}

export function taskSource(message: InboundMessage): TaskSource {
  return { message_id: message.message_id ?? null, from: message.from, subject: message.subject ?? null, body: message.body };
}
