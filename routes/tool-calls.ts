// Tool calls: the records (admin), and the dispatch of one tool, host or builtin, under the run's
// resolution (the path a model harness takes). Two sections, so a host can mount one without the other.
import { z } from 'zod';
import { toolIdSchema } from '../src/core/types';
import { authenticationResultsSchema, senderText } from '../src/http/fields';
import { approvalRequestViewSchema } from '../src/core/approval-request';
import { pageToolCalls, toolCallStatusSchema, toolCallViewSchema } from '../src/services/tool-calls';
import { currentRun } from '../middleware/current-run';
import { requestState } from '../middleware/request-state';
import type { ToolOutcome } from '../src/run/tool-run';
import { linkNextPage, pageQuery } from './paging';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

export const dispatchBody = z.union([
  z.strictObject({
    tool: toolIdSchema,
    input: z.unknown().optional(),
    sender: senderText.optional(),
    authentication_results: authenticationResultsSchema.optional(),
  }),
  z.strictObject({ tool: toolIdSchema, input: z.unknown().optional(), scheduled: z.literal(true) }),
]);

export const toolCallsQuery = z.strictObject({
  ...pageQuery,
  status: toolCallStatusSchema.optional(),
});

export const toolCallRecordsRoutes = routeSection<Pick<RouteServices, 'agents' | 'sequelize'>>('Tool calls', (route) => [
  route({
    method: 'get',
    path: '/agents/:id/tool-calls',
    summary: "An agent's tool-call records",
    description:
      'Newest first, at most `limit` (default 100): every execution, refusal and skip. `status` keeps only the records with that status (`denied`: the refusals). When older records follow, the `Toolgate-Next-Cursor` header holds the cursor to pass as `after`, and `Link` (rel="next") the next page; a cursor these records did not give is a 422 `validation_error` of type `invalid_cursor`.',
    roles: ['admin'],
    query: toolCallsQuery,
    success: { status: 200, description: 'The records', schema: z.array(toolCallViewSchema) },
    handle: async (tg, { ids, query, req, res }) => {
      await tg.agents.get(ids.id);
      const page = await pageToolCalls(tg.sequelize, ids.id, query);
      linkNextPage(req, res, page.next, { limit: query.limit, status: query.status });
      return page.calls;
    },
  }),
]);

/** What the dispatch route builds of a call's outcome (below). */
const dispatchAnswer = z.union([
  z.object({ tool: z.string(), status: z.literal('success'), output: z.unknown() }),
  z.object({ tool: z.string(), status: z.literal('failure'), error: z.string().describe("the tool's own error text") }),
]);

const dispatchPendingAnswer = z.object({
  tool: z.string(),
  status: z.literal('pending_approval'),
  approval_request_id: z.number().int(),
  request: approvalRequestViewSchema,
});

export const dispatchRoutes = routeSection<Pick<RouteServices, 'toolRun'>>('Tool calls', (route) => [
  route({
    method: 'post',
    path: '/agents/:id/tool-calls',
    summary: 'Dispatch one tool call under the run',
    description:
      'The path a model harness takes. A sender run (client) or, with `scheduled: true`, a scheduled run (scheduler or admin). A tool not offered is a 403 tool_forbidden with a denied record; a tool that throws is a 200 with status "failure"; a tool this sender may only request is filed as an approval request (202).',
    roles: ['client', 'scheduler'],
    body: dispatchBody,
    success: { status: 200, description: 'The outcome: the tool returned, or threw', schema: dispatchAnswer },
    also: [
      {
        status: 202,
        description:
          "The tool needs approval for this sender (SEMANTICS §12): the call was filed as an approval request, or the same call's pending request is returned; nothing ran",
        schema: dispatchPendingAnswer,
      },
    ],
    errors: ['sender_forbidden', 'tool_forbidden', 'cap_exceeded', 'not_dispatchable'],
    idempotent: true,
    use: (tg) => [tg.toolRun()],
    handle: async (_tg, { req, res, body }) => {
      // The input is the body's `input`: a 422 points there, where the caller wrote the field.
      // A tool that threw is a result for the caller (as MCP's isError), with the tool's own words.
      const answerOf = (outcome: ToolOutcome<unknown>) =>
        outcome.status === 'success'
          ? { tool: body.tool, status: 'success' as const, output: outcome.output }
          : { tool: body.tool, status: 'failure' as const, error: outcome.error };
      // With an Idempotency-Key, its answer is kept in the statement that completes the call's record.
      const held = requestState(res).heldKey;
      const keep = held && { key: held, answerOf: (outcome: ToolOutcome<unknown>) => ({ status: 200, body: answerOf(outcome) }) };
      const step = await currentRun(req).call(body.tool, body.input, { inputAt: ['body', 'input'], ...(keep ? { keep } : {}) });
      switch (step.status) {
        case 'success':
        case 'failure':
          return held?.kept?.body ?? answerOf(step);
        case 'pending_approval':
          // Filed, not run (SEMANTICS §12): accepted, for an approver to decide.
          res
            .status(202)
            .json({ tool: body.tool, status: 'pending_approval', approval_request_id: step.request.id, request: step.request });
          return undefined;
        default:
          // Nothing ran: refused (403), over a cap (429), an input the tool refuses (422), no implementation (501).
          throw step.error;
      }
    },
  }),
]);
