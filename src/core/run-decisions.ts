// What toolgate read in a message for approval decisions (SEMANTICS §12a), before any model ran, as
// plain data: the requests it decided, and those it left pending with the codes that decide them.
// The answer, the run's record, the thread's history and the reply all say the same, from this shape.
import { z } from 'zod';

const decisionResultSchema = z.union([
  z.object({ status: z.literal('success'), output: z.unknown() }),
  z.object({ status: z.literal('failure'), error: z.string() }),
]);

export const decidedRequestSchema = z.object({
  request_id: z.number().int(),
  tool: z.string(),
  input: z.unknown(),
  /** The requester's routing key (null: a scheduled run, or a sender with none): the reply copies them. */
  requested_by: z.string().nullable(),
  status: z.enum(['approved', 'denied']),
  /** What the one execution of an approved request gave. */
  result: decisionResultSchema.optional(),
});
export type DecidedRequest = z.infer<typeof decidedRequestSchema>;

export const undecidedRequestSchema = z.object({
  request_id: z.number().int(),
  code: z.string(),
  tool: z.string(),
  input: z.unknown(),
  requested_by: z.string().describe('who asked, in words'),
  /** Why this message did not decide it (it hedged, several wait, the decision could not be carried out). */
  reason: z.string(),
});
export type UndecidedRequest = z.infer<typeof undecidedRequestSchema>;

export const runDecisionsSchema = z.object({
  decided: z.array(decidedRequestSchema),
  undecided: z.array(undecidedRequestSchema),
});
export type RunDecisions = z.infer<typeof runDecisionsSchema>;

export const NO_DECISIONS: RunDecisions = Object.freeze({ decided: [], undecided: [] }) as RunDecisions;

/** Whether the message decided something or left something it might have decided. */
export function hasDecisions(decisions: RunDecisions): boolean {
  return decisions.decided.length > 0 || decisions.undecided.length > 0;
}
