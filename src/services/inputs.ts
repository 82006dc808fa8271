// What callers give the services, as zod schemas: the HTTP routes and a host's own code both go
// through these, so a value the API would refuse is refused the same way from code.
import { z } from 'zod';
import { bodyId, name, ruleSchema, rulesSchema, text } from '../http/schemas';

export const agentInputSchema = z.strictObject({
  name: name(200),
  description: text(10_000).nullable().optional(),
  system_prompt: text(100_000).nullable().optional(),
  // The legacy string, taken as legacy clients send it (even odd spacing); bounded, one line.
  enabled_tools: text(10_000).nullable().optional(),
  toolkit_ids: z.array(bodyId).max(100, 'at most 100 toolkits').optional(),
});
export const agentPatchSchema = agentInputSchema.omit({ toolkit_ids: true }).partial();

export const toolkitInputSchema = z.strictObject({
  name: name(200),
  description: text(2000).optional(),
  // Any string here: the service checks it against the manifest and suggests what was meant.
  member_tool_ids: z.array(text(64).min(1)).max(500, 'at most 500 members'),
});
export const toolkitPatchSchema = toolkitInputSchema.partial();

export const attachInputSchema = z.strictObject({
  toolkit_id: bodyId,
  allow_proactive: z.boolean().optional(),
  rules: rulesSchema.optional(),
});
export const attachmentPatchSchema = attachInputSchema.omit({ toolkit_id: true });

export { ruleSchema };

/** What a caller may pass: patterns as written, ids as numbers or canonical text. */
export type AgentInput = z.input<typeof agentInputSchema>;
export type AgentPatch = z.input<typeof agentPatchSchema>;
export type ToolkitInput = z.input<typeof toolkitInputSchema>;
export type ToolkitPatch = z.input<typeof toolkitPatchSchema>;
export type AttachInput = z.input<typeof attachInputSchema>;
export type AttachmentPatch = z.input<typeof attachmentPatchSchema>;
export type RuleInput = z.input<typeof ruleSchema>;
