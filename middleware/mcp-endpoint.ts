// The MCP endpoint (SEMANTICS §14): Streamable HTTP for MCP sessions, outside /api, reached with a
// session's bearer token and no other. Draining, JSON bodies with toolgate's bounds and its error
// shape, as on the router; the protocol itself is the SDK's.
import { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import type { McpSessions } from '../src/mcp-sessions/mcp-sessions';
import { bearerTokenOf } from './auth';

export function mcpEndpoint(
  sessions: McpSessions,
  before: readonly (RequestHandler | ErrorRequestHandler)[],
  errors: ErrorRequestHandler,
): Router {
  const router = Router();
  router.use(...before);
  // The three methods of Streamable HTTP (routes/mcp-endpoint.ts describes them).
  const serve: RequestHandler = function serveMcpSession(req, res, next) {
    sessions.serve(req, res, bearerTokenOf(req.headers.authorization), req.body).catch(next);
  };
  router.post('/', serve);
  router.get('/', serve);
  router.delete('/', serve);
  router.use(errors);
  return router;
}
