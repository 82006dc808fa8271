// The plain data the gating core works on: no Express, no Sequelize. One zod schema per shape,
// and every TypeScript type derived from it, so the shapes have a single source of truth.
import { z } from 'zod';

/** The longest tool id: what toolkits store. */
export const MAX_TOOL_ID = 64;

// One double underscore may part a prefix from the rest: `<server>__<tool>` names an MCP server's
// tool (src/mcp/mcp-tool-id.ts), and no tool registered in code may use it (tool-manifest.ts).
export const toolIdSchema = z
  .string()
  .regex(
    /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*(?:__[a-z0-9]+(?:_[a-z0-9]+)*)?$/,
    "a tool id is snake_case: lowercase letters, digits and single underscores, starting with a letter (an MCP server's tool: <server>__<tool>)",
  )
  .max(MAX_TOOL_ID);

export const toolKindSchema = z.enum(['gate', 'enhancement']);
export type ToolKind = z.infer<typeof toolKindSchema>;

export const toolDefinitionSchema = z.object({
  id: toolIdSchema,
  display_name: z.string().min(1).max(80),
  summary: z.string().min(1).max(200),
  kind: toolKindSchema,
  builtin: z.boolean(),
});
export type ToolDefinition = z.infer<typeof toolDefinitionSchema>;

export const ruleKindSchema = z.enum(['allow', 'deny']);
export type RuleKind = z.infer<typeof ruleKindSchema>;

/** One gate rule as stored: the pattern is already normalized (see pattern.ts). */
const gateRuleSchema = z.object({ id: z.number().int().nullable(), kind: ruleKindSchema, pattern: z.string() });
export type GateRule = z.output<typeof gateRuleSchema>;

/** One attachment with what resolution needs: its terms, its rules and its toolkit's members. */
export interface AttachmentPolicy {
  attachment_id: number;
  toolkit_id: number;
  toolkit_name: string;
  allow_proactive: boolean;
  member_tool_ids: readonly string[];
  rules: readonly GateRule[];
  /**
   * Who approves its members' calls (SEMANTICS §12): allow patterns, already normalized. Absent or
   * null: no approval, calls run as usual. Empty: only an operator approves.
   */
  approvers?: readonly string[] | null;
  /** How often its members may run (SEMANTICS §13). Absent or empty: no cap. */
  caps?: readonly CapRule[];
  /**
   * Terms tried beside the live ones (SEMANTICS §15): each run resolves them too, for its shadow
   * record, and nothing is ever offered or granted by them. Absent or null: none.
   */
  candidate?: CandidateTerms | null;
}

/**
 * An attachment's candidate terms: the fields given replace the live ones in the candidate's
 * resolution, the others are the live ones. Patterns already normalized.
 */
export interface CandidateTerms {
  rules?: readonly GateRule[];
  caps?: readonly CapRule[];
  /** Present and null: the candidate needs no approval; absent: the live approval terms. */
  approvers?: readonly string[] | null;
  allow_proactive?: boolean;
  /**
   * When the candidate was set, as the database writes it to the microsecond: the shadow's counts of
   * its caps are kept under it, so a candidate set again counts afresh. Absent: counted under `0`.
   */
  stamp?: string;
}

/** Whom a cap counts calls of: the agent as a whole, or each sender apart. */
export const capPerSchema = z.enum(['agent', 'sender']);
export type CapPer = z.infer<typeof capPerSchema>;

/**
 * One cap of an attachment (SEMANTICS §13): at most `limit` calls within `window_s` seconds, of one
 * member (`tool_id`) or of all its members together (null), counted per agent or per sender.
 */
export const capRuleSchema = z.strictObject({
  tool_id: toolIdSchema.nullable(),
  per: capPerSchema,
  limit: z.number().int().min(1).max(10_000),
  window_s: z
    .number()
    .int()
    .min(1)
    .max(365 * 86_400),
});
export type CapRule = z.infer<typeof capRuleSchema>;

/** Everything one agent's resolution reads, loaded in one query. */
export interface AgentPolicyData {
  agent_id: number;
  /**
   * The agent's own access rules (SEMANTICS §9): whether it handles a sender's message at all,
   * decided before any tool. Absent or empty: every sender (the legacy behaviour).
   */
  access_rules?: readonly GateRule[];
  attachments: readonly AttachmentPolicy[];
}

/**
 * A run: a sender run carries the routing key of the message being handled (null when the
 * sender has none, see routing-key.ts); a scheduled run has no sender at all; the catalogue is
 * the admin's view of everything attached, gates ignored. It never dispatches.
 */
export type Run = { kind: 'sender'; routing_key: string | null } | { kind: 'scheduled' } | { kind: 'catalogue' };

/** Who approves an attachment's members' calls (SEMANTICS §12), as the views give it. */
export const approvalTermsSchema = z
  .object({ approvers: z.array(z.string()).describe('approver patterns, normalized; empty: only an operator approves') })
  .nullable()
  .describe("who approves this attachment's members' calls (SEMANTICS §12); null: calls run as usual");

/** When a row was written, as the views give it. */
export const storedAtSchema = z.string().nullable().describe('ISO 8601, UTC; null only on a row adopted from a legacy database');

/** What a record says of the run it came from: a sender run or a scheduled run (the catalogue never dispatches). */
export const dispatchKindSchema = z.enum(['sender', 'scheduled']);
export type DispatchKind = z.infer<typeof dispatchKindSchema>;
export type RunKind = Run['kind'];

export const gateReasonSchema = z.enum([
  'deny_rule',
  'allow_rule',
  'allow_list_default',
  'block_list_default',
  'no_rules',
  'no_routing_key',
  'proactive_allowed',
  'proactive_off',
  'catalogue',
]);
export type GateReason = z.infer<typeof gateReasonSchema>;

const gateDecisionSchema = z.object({ admitted: z.boolean(), reason: gateReasonSchema, matched_rule: gateRuleSchema.nullable() });
export type GateDecision = z.output<typeof gateDecisionSchema>;

const attachmentExplanationSchema = z.object({
  attachment_id: z.number().int(),
  toolkit_id: z.number().int(),
  toolkit_name: z.string(),
  admitted: z.boolean(),
  reason: gateReasonSchema,
  matched_rule: gateRuleSchema.nullable(),
  /** The toolkit's live members (registered tools), whether or not this attachment admitted. */
  tools: z.array(z.string()),
  stale_tool_ids: z.array(z.string()),
  approval: approvalTermsSchema,
  needs_approval: z
    .boolean()
    .describe("whether this run's calls of its members become approval requests (approval set, and the run's key is no approver)"),
  caps: z
    .array(
      z.object({
        tool_id: z.string().nullable(),
        per: capPerSchema,
        limit: z.number().int(),
        window_s: z.number().int(),
        remaining: z
          .number()
          .int()
          .optional()
          .describe("the calls left in this run's window, for a run that names its sender or a scheduled one"),
      }),
    )
    .describe('its caps, the window in seconds'),
});
export type AttachmentExplanation = z.output<typeof attachmentExplanationSchema>;

/** What resolution decides for a run (GET /agents/:id/resolution answers it). */
export const resolutionSchema = z.object({
  run: z.enum(['sender', 'scheduled', 'catalogue']),
  routing_key: z.string().nullable(),
  access: gateDecisionSchema
    .nullable()
    .describe("the agent's access rules' decision on the sender; null for a scheduled run or the catalogue"),
  tools: z.array(z.string()).describe('the tools offered, sorted; none when access refuses the sender'),
  /** MCP tools whose server changed their definition since it was pinned (SEMANTICS §14): refused as `tool_changed` until accepted. */
  held: z
    .array(z.string())
    .optional()
    .describe('MCP tools the attachments would offer that are held (their server changed their definition): not offered until accepted'),
  /** Grants only add: a tool another admitting attachment offers without approval is not here. */
  needs_approval: z
    .array(z.string())
    .describe('the offered tools this run can only request: no admitting attachment offers them without approval'),
  /** A cap binds its own attachment. */
  capped: z
    .array(z.string())
    .describe(
      'the offered tools whose calls count toward a cap: every attachment the run calls them under caps them; a tool another admitting attachment offers uncapped is not here',
    ),
  attachments: z.array(attachmentExplanationSchema),
});
export type Resolution = z.output<typeof resolutionSchema>;
