// What the routes answer, as zod schemas, for the OpenAPI document. The services' view types stay
// the source of what is sent; test/openapi/response-types.test.ts fails to compile when a schema
// here and the type it describes drift apart.
import { z } from 'zod';
import { approvalTermsSchema, capPerSchema, gateReasonSchema, ruleKindSchema } from '../src/core/types';

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
