// What the language model reads and writes, as zod schemas: the analysis is HTTP.md's shape, and
// every implementation's output is checked against it before it leaves the model.
import { z } from 'zod';

/** The part of a message the model reads: the routes map their message body onto this. */
export interface ModelEmail {
  from: string;
  subject?: string;
  body: string;
  /** When the message arrived; relative dates ("by Friday") resolve against it, else `ctx.now`. */
  received_at?: Date;
}

/**
 * What a message is about, as a small fixed set so routes and clients can branch on it:
 * - `support`: help with an order, an account or the product (orders, deliveries, log-ins);
 * - `billing`: invoices, charges, payments, refunds;
 * - `complaint`: strong dissatisfaction that is not an outage;
 * - `scheduling`: meetings, calls, invitations, RSVPs;
 * - `incident`: something is broken or under attack now (outages, errors, security events);
 * - `newsletter`: bulk mail (an unsubscribe link, a list sender): nothing is asked of the reader;
 * - `gratitude`: thanks and praise, with nothing asked;
 * - `sales`: offers, quotes, demos and pricing, whichever side is selling;
 * - `hiring`: job applications and candidates;
 * - `feedback`: suggestions and feature requests;
 * - `other`: none of the above.
 */
export const emailCategorySchema = z.enum([
  'support',
  'billing',
  'complaint',
  'scheduling',
  'incident',
  'newsletter',
  'gratitude',
  'sales',
  'hiring',
  'feedback',
  'other',
]);
export type EmailCategory = z.infer<typeof emailCategorySchema>;

export const prioritySchema = z.enum(['low', 'medium', 'high', 'urgent']);
export type Priority = z.infer<typeof prioritySchema>;

export const sentimentSchema = z.enum(['positive', 'neutral', 'negative']);
export type Sentiment = z.infer<typeof sentimentSchema>;

/** A calendar date, YYYY-MM-DD, that exists (2025-02-30 does not). */
const isoDateSchema = z.iso.date();

export const actionItemSchema = z.strictObject({
  title: z.string().trim().min(1).max(200),
  due: isoDateSchema.optional(),
});
export type ActionItem = z.infer<typeof actionItemSchema>;

export const emailAnalysisSchema = z.strictObject({
  summary: z.string().trim().min(1),
  category: emailCategorySchema,
  priority: prioritySchema,
  sentiment: sentimentSchema,
  action_items: z.array(actionItemSchema).max(20),
  suggested_reply: z.string().trim().min(1),
});
export type EmailAnalysis = z.infer<typeof emailAnalysisSchema>;
