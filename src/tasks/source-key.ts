// The key that makes task creation idempotent per message: the message's own id, or, for a message
// without one, a hash of what it says, so a retried workflow maps to the same key either way.
import { createHash } from 'node:crypto';
import type { TaskSource } from './task-source';

// A Message-ID longer than a header line may be (RFC 5322: 998 characters) is hashed instead, so the
// unique index's entries stay well under PostgreSQL's size limit.
const MAX_MESSAGE_ID_BYTES = 998;

/**
 * `message_id` as given (trimmed); without one, `sha256:<hex>` of the JSON array [from, subject, body]
 * (a missing subject counts as ""). JSON keeps the fields apart: no separator can be forged inside one.
 */
export function taskSourceKey(source: TaskSource): string {
  const messageId = messageIdOf(source);
  if (messageId !== null && Buffer.byteLength(messageId) <= MAX_MESSAGE_ID_BYTES) return messageId;
  const material =
    messageId !== null ? JSON.stringify(['message_id', messageId]) : JSON.stringify([source.from, source.subject ?? '', source.body]);
  return `sha256:${createHash('sha256').update(material, 'utf8').digest('hex')}`;
}

/** The message's id, trimmed; null when it has none (absent, null or blank). */
export function messageIdOf(source: TaskSource): string | null {
  const id = source.message_id?.trim();
  return id ? id : null;
}
