// The MCP endpoint as the reference describes it (SEMANTICS §14): served by tg.mcpEndpoint with the
// SDK's Streamable HTTP transport (middleware/mcp-endpoint.ts), not by a route handler, so this
// section only describes; the service mounts it at /mcp, outside /api.
import { z } from 'zod';
import type { DescribedSection, RouteDescription } from './route';

const jsonRpc = z.record(z.string(), z.unknown()).describe('A JSON-RPC 2.0 message, or a batch of them, of the Model Context Protocol');

const endpoint = {
  path: '/mcp',
  roles: 'anyone',
} as const;

const SESSION_TOKEN =
  "Authorization: Bearer <the session's token> (any other token, or a closed or expired session's, is a 401 unauthenticated); after initialize, the Mcp-Session-Id header the initialize answer gave.";

const routes: RouteDescription[] = [
  {
    ...endpoint,
    method: 'post',
    summary: 'An MCP session: send a message',
    description: `initialize, tools/list (the session's tools the agent's policy still grants) and tools/call (through the one dispatch path; a refused, capped or pending call is an isError result). ${SESSION_TOKEN}`,
    body: jsonRpc,
    success: { status: 200, description: 'The JSON-RPC answer, as JSON or as a text/event-stream' },
  },
  {
    ...endpoint,
    method: 'get',
    summary: "An MCP session: the server's own stream",
    description: `A text/event-stream of the server's notifications, notifications/tools/list_changed among them. ${SESSION_TOKEN}`,
    success: { status: 200, description: 'A text/event-stream' },
  },
  {
    ...endpoint,
    method: 'delete',
    summary: 'An MCP session: end the connection',
    description: `Ends this connection (its Mcp-Session-Id); the session itself ends with DELETE /api/agents/:id/mcp-sessions/:sessionId or its expiry. ${SESSION_TOKEN}`,
    success: { status: 200, description: 'Ended' },
  },
];

export const mcpEndpointRoutes: DescribedSection = { tag: 'MCP sessions', routes };
