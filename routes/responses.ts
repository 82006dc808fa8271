// What the routes answer, as zod schemas, for the OpenAPI document. The services' view types stay
// the source of what is sent; test/openapi/response-types.test.ts fails to compile when a schema
// here and the type it describes drift apart.
import { z } from 'zod';
import { approvalTermsSchema, capPerSchema, gateReasonSchema, ruleKindSchema, dispatchKindSchema } from '../src/core/types';
import { runShadowSchema } from '../src/core/shadow';
import { decidedRequestSchema, runDecisionsSchema, undecidedRequestSchema } from '../src/core/run-decisions';
import { newThreadReasonSchema, stoppedSchema } from '../src/agent/run-store';
import { stepStatusSchema } from '../src/llm/agent-step';

const capRuleResponse = z.object({
  tool_id: z.string().nullable(),
  per: capPerSchema,
  limit: z.number().int(),
  window_s: z.number().int(),
});

const explanationResponse = z.object({
  attachment_id: z.number().int(),
  toolkit_id: z.number().int(),
  toolkit_name: z.string(),
  admitted: z.boolean(),
  reason: gateReasonSchema,
  matched_rule: z.object({ id: z.number().int().nullable(), kind: ruleKindSchema, pattern: z.string() }).nullable(),
  tools: z.array(z.string()),
  stale_tool_ids: z.array(z.string()),
  approval: approvalTermsSchema,
  needs_approval: z
    .boolean()
    .describe("whether this run's calls of its members become approval requests (approval set, and the run's key is no approver)"),
  caps: z
    .array(
      capRuleResponse.extend({
        remaining: z
          .number()
          .int()
          .optional()
          .describe("the calls left in this run's window, for a run that names its sender or a scheduled one"),
      }),
    )
    .describe('its caps, the window in seconds'),
});

const decisionResponse = z.object({
  admitted: z.boolean(),
  reason: gateReasonSchema,
  matched_rule: z.object({ id: z.number().int().nullable(), kind: ruleKindSchema, pattern: z.string() }).nullable(),
});

export const resolutionResponse = z.object({
  run: z.enum(['sender', 'scheduled', 'catalogue']),
  routing_key: z.string().nullable(),
  access: decisionResponse
    .nullable()
    .describe("the agent's access rules' decision on the sender; null for a scheduled run or the catalogue"),
  tools: z.array(z.string()).describe('the tools offered, sorted; none when access refuses the sender'),
  held: z
    .array(z.string())
    .optional()
    .describe('MCP tools the attachments would offer that are held (their server changed their definition): not offered until accepted'),
  needs_approval: z
    .array(z.string())
    .describe('the offered tools this run can only request: no admitting attachment offers them without approval'),
  capped: z
    .array(z.string())
    .describe(
      'the offered tools whose calls count toward a cap: every attachment the run calls them under caps them; a tool another admitting attachment offers uncapped is not here',
    ),
  attachments: z.array(explanationResponse),
});

const stepResponse = z.object({
  tool: z.string(),
  input: z.unknown().describe('the arguments as the model gave them: parsed JSON, or the text when it was not JSON'),
  status: stepStatusSchema,
  output: z.unknown().optional(),
  error: z.string().optional(),
  approval_request_id: z
    .number()
    .int()
    .optional()
    .describe('the approval request a pending_approval step was filed as (or found pending), or the approved one whose call it repeats'),
});

const newThreadResponse = z.object({
  reason: newThreadReasonSchema,
  requested: z.string().describe('what the message named: the thread reference it gave, or the Message-ID that found the thread'),
});

export const agentRunResponse = z.object({
  run_id: z.number().int(),
  thread_id: z.string().optional().describe("the thread's reference (opaque); absent for a scheduled run"),
  new_thread: newThreadResponse
    .optional()
    .describe('present when the message named a thread it could not join: it was handled in this new thread, with no history'),
  run: dispatchKindSchema,
  routing_key: z.string().nullable(),
  tools_offered: z.array(z.string()),
  needs_approval: z.array(z.string()).describe('the offered tools this run could only request'),
  steps: z.array(stepResponse),
  decided: z
    .array(decidedRequestSchema)
    .optional()
    .describe(
      "the approval requests this message decided: read by toolgate in the approver's own text before the model ran, never by a model",
    ),
  undecided: z
    .array(undecidedRequestSchema)
    .optional()
    .describe('the requests pending in the thread that this sender may decide and the message did not, each with its code and why'),
  reply: z.object({
    text: z.string().describe('empty when the run stopped without a reply'),
    message_id: z
      .string()
      .nullable()
      .describe("the reply's own Message-ID, for the relay that sends it; null when there is no reply to send"),
    to: z.array(z.string()),
    cc: z.array(z.string()).describe('the escalation address when the run passed something on; the requesters of requests it decided'),
  }),
  stopped: stoppedSchema.describe("error: toolgate's own work failed after a tool had run; the steps say what ran"),
  error: z.string().optional().describe('why the run stopped without a reply, or what failed after a tool ran'),
});

const storedRunMessage = z.union([
  z.object({
    from: z.string(),
    to: z.array(z.string()).optional(),
    cc: z.array(z.string()).optional(),
    reply_to: z.string().optional(),
    subject: z.string().optional(),
    body: z.string(),
    message_id: z.string().optional(),
    in_reply_to: z.string().optional(),
    references: z.array(z.string()).optional(),
    auto_submitted: z.string().optional(),
    precedence: z.string().optional(),
    x_autoreply: z.string().optional(),
    x_autorespond: z.string().optional(),
    original_length: z.number().int().optional().describe('only on history a model read: the length of a body cut to fit'),
  }),
  z.object({ instruction: z.string(), original_length: z.number().int().optional() }),
]);

export const storedRunResponse = z.object({
  id: z.number().int(),
  thread_id: z.string().nullable(),
  run: dispatchKindSchema,
  message: storedRunMessage,
  routing_key: z.string().nullable(),
  tools_offered: z.array(z.string()),
  steps: z.array(stepResponse),
  decisions: runDecisionsSchema.nullable().describe('what toolgate read in the message for approval decisions; null when nothing'),
  reply: z.object({ text: z.string(), message_id: z.string(), to: z.array(z.string()), cc: z.array(z.string()) }).nullable(),
  stopped: stoppedSchema.nullable().describe('null while the run is going; interrupted: its instance died and the sweeper closed it'),
  error: z.string().nullable(),
  new_thread: newThreadResponse.nullable(),
  shadow: runShadowSchema.optional(),
  created_at: z.string(),
  completed_at: z.string().nullable(),
});

export const threadResponse = z.object({
  id: z.string().describe("the thread's reference"),
  agent_id: z.number().int(),
  subject: z.string().nullable(),
  message_count: z.number().int(),
  participants: z.array(z.string()).describe('the routing keys that may write into the thread'),
  created_at: z.string(),
  updated_at: z.string(),
});

export const threadWithMessagesResponse = threadResponse.extend({
  messages: z.array(storedRunResponse),
  next_after: z.number().int().nullable().describe('pass as `after` for the next page; null on the last'),
});

/** Every error body (HTTP.md, "Errors"); `detail` is a list only for validation_error. */
export const errorResponse = z.object({
  detail: z.union([z.string(), z.array(z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() }))]),
  code: z.string().describe('stable: branch on it, never on detail'),
  request_id: z.string().optional(),
  tool: z.string().optional().describe('on tool_forbidden and not_dispatchable'),
  reason: z.literal('tool_changed').optional().describe('on tool_forbidden of a held MCP tool: its server changed its definition'),
  bound: z.string().optional().describe('on input_too_complex: the parsing bound the input is past, such as json_depth'),
  loc: z
    .array(z.union([z.string(), z.number()]))
    .optional()
    .describe('on input_too_complex: where the value past the bound is, as in validation_error'),
  report: z
    .looseObject({})
    .optional()
    .describe("on parity_mismatch: the migration's report, as POST /api/migrations/enabled-tools answers it"),
});

export const healthResponse = z.object({ status: z.literal('ok') });
export const readyResponse = z.object({ status: z.literal('ready') });
