// What callers give the attachment services as an attachment's terms (its rules, approval and caps),
// as zod schemas: the HTTP routes and a host's own code both go through these, so a value the API
// would refuse is refused the same way from code. The policy preview reads the same terms.
import { z } from 'zod';
import { bodyId, patternSchema, ruleSchema, rulesSchema } from '../http/fields';
import { windowSeconds } from '../core/cap-window';
import { capPerSchema, toolIdSchema } from '../core/types';

/**
 * An attachment's approval terms (SEMANTICS §12): approver patterns (allow patterns, normalized,
 * each once, sorted), or null for none. An empty list means only an operator approves.
 */
export const approvalSchema = z
  .strictObject({ approvers: z.array(patternSchema).max(100, 'at most 100 approver patterns') })
  .transform(({ approvers }) => ({ approvers: [...new Set(approvers)].sort() }))
  .nullable();

/** One cap as a caller writes it (SEMANTICS §13): the window as `<n><s|m|h|d>`, kept in seconds. */
export const capInputSchema = z
  .strictObject({
    tool_id: toolIdSchema.nullable().default(null),
    per: capPerSchema,
    limit: z.number().int().min(1, 'a cap lets at least one call through').max(10_000, 'at most 10000 calls a window'),
    window: z.string().max(20),
  })
  .transform((cap, ctx) => {
    const window_s = windowSeconds(cap.window);
    if (window_s === null || window_s > 365 * 86_400) {
      ctx.addIssue({
        code: 'custom',
        path: ['window'],
        message: 'a window is a whole number and a unit, s, m, h or d, such as 1d or 90m, of at most 365d',
      });
      return z.NEVER;
    }
    return { tool_id: cap.tool_id, per: cap.per, limit: cap.limit, window_s };
  });
export const capsSchema = z.array(capInputSchema).max(20, 'at most 20 caps on one attachment');

export const attachInputSchema = z.strictObject({
  toolkit_id: bodyId,
  allow_proactive: z.boolean().optional(),
  rules: rulesSchema.optional(),
  approval: approvalSchema.optional(),
  caps: capsSchema.optional(),
});
export const attachmentPatchSchema = attachInputSchema.omit({ toolkit_id: true });

export { ruleSchema };

/** What a caller may pass: patterns as written, ids as numbers or canonical text. */
export type AttachInput = z.input<typeof attachInputSchema>;
export type AttachmentPatch = z.input<typeof attachmentPatchSchema>;
export type RuleInput = z.input<typeof ruleSchema>;
