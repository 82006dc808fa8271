// MCP sessions (SEMANTICS §14, "Gated tools served over MCP"): one run of an agent, resolved once
// for a message's sender (its sender authentication and the agent's access rules applied) or as a
// scheduled run, opened for an MCP client at /mcp with a bearer token of its own; and its close.
import { z } from 'zod';
import { currentRun } from '../middleware/current-run';
import { stateOf } from '../middleware/request-state';
import { emailMessageSchema } from '../src/http/email-message';
import { toolIdSchema } from '../src/core/types';
import { parsedBody, routeSection } from './route';
import type { RouteServices } from './route-services';

export const mcpSessionBody = z.union([z.strictObject({ message: emailMessageSchema }), z.strictObject({ scheduled: z.literal(true) })]);

export const mcpSessionResponse = z.object({
  session_id: z.uuid(),
  url: z.string().describe('The Streamable HTTP endpoint to point an MCP client at'),
  token: z.string().describe("The session's bearer token: shown once, here; it opens this session's tools and nothing else"),
  expires_at: z.string().describe('ISO 8601; the session ends then, or when closed'),
  routing_key: z.string().nullable(),
  tools_offered: z.array(toolIdSchema),
  needs_approval: z.array(toolIdSchema),
});

const sessionParam = { sessionId: z.uuid('a session id is the session_id its opening answered, a UUID') };

type McpSessionServices = Pick<RouteServices, 'mcpSessions' | 'mcpSessionUrl' | 'toolRun'>;

export const mcpSessionsRoutes = routeSection<McpSessionServices>('MCP sessions', (route) => [
  route({
    method: 'post',
    path: '/agents/:id/mcp-sessions',
    summary: "Open an MCP session on one run's tools",
    description:
      "Resolves one run, for the message's sender (client; sender authentication and access rules as for a message) or, with `scheduled: true`, a scheduled run (scheduler or admin), and answers the URL and bearer token an MCP client uses to list and call exactly that run's tools. Each call is checked again on the agent's policy as it stands: a revocation refuses the next call, and the session's list shrinks (tools/list_changed). The token expires, and opens nothing else.",
    roles: ['client', 'scheduler'],
    body: mcpSessionBody,
    success: { status: 201, description: 'The session, its URL and its token', schema: mcpSessionResponse },
    errors: ['sender_forbidden'],
    use: (tg) => [
      tg.toolRun({
        runOf: (req) => {
          const body = parsedBody(req, mcpSessionBody);
          return 'scheduled' in body
            ? { kind: 'scheduled' }
            : { kind: 'sender', sender: body.message.from, authentication_results: body.message.authentication_results };
        },
      }),
    ],
    handle: async (tg, { req, body }) => {
      const run = currentRun(req);
      const auth = stateOf(req)?.auth;
      const opened = await tg.mcpSessions.open(
        run,
        { caller: auth?.caller ?? null, role: auth?.role ?? 'client' },
        'message' in body ? (body.message.message_id ?? null) : null,
      );
      return tg.mcpSessions.view(opened, run, tg.mcpSessionUrl(req));
    },
  }),
  route({
    method: 'delete',
    path: '/agents/:id/mcp-sessions/:sessionId',
    params: sessionParam,
    summary: 'Close an MCP session',
    description:
      'Its token opens nothing from now on, on every instance; its connections on this instance end at once. Only the caller that opened it, or an admin, closes it (another caller: 404).',
    roles: ['client', 'scheduler'],
    success: { status: 204, description: 'Closed' },
    handle: async (tg, { req, ids, params }) => {
      const auth = stateOf(req)?.auth;
      await tg.mcpSessions.close(ids.id, params.sessionId as string, auth?.role === 'admin' ? 'any' : (auth?.caller ?? null));
    },
  }),
]);
