// createToolgate()'s second step: from the domain services to what serves requests, the middleware
// the routes and the host share, the router with the route groups that are on, and the MCP endpoint.
import { Router, type RequestHandler } from 'express';
import { authenticate, requireRole } from '../middleware/auth';
import { toolRun, type ToolRunOptions } from '../middleware/current-run';
import { Drain } from '../middleware/drain';
import { errorFields, errorHandler } from '../middleware/error-handler';
import { idempotencyKey } from '../middleware/idempotency-key';
import { jsonBody } from '../middleware/json-body';
import { mcpEndpoint } from '../middleware/mcp-endpoint';
import { clientRateLimit } from '../middleware/rate-limit';
import { requestId } from '../middleware/request-id';
import { requireTool, type RequireToolOptions } from '../middleware/require-tool';
import { mountApiRoutes } from '../routes/api-routes';
import type { RouteServices } from '../routes/route-services';
import type { CheckedToolgateOptions } from './toolgate-options';
import type { ToolgateServices } from './toolgate-services';

export interface ToolgateRouter {
  /** The domain services with the middleware that reads a request: what the routes take, and internalsOf() gives. */
  routes: RouteServices;
  router: Router;
  mcpEndpoint: Router;
  /** Refuses new requests to both while those in flight end (SEMANTICS §13). */
  drain: Drain;
}

export function toolgateRouter(services: ToolgateServices, options: CheckedToolgateOptions): ToolgateRouter {
  const { domain } = services;
  const logger = options.logger;
  const manifest = domain.registry.manifest;
  const senderCheck = options.senders.check;
  const authenticateBearer = authenticate(options.auth, {
    onRoleOfError: (err) =>
      logger?.error({ err: errorFields(err) }, "the host's roleOf failed: the request was refused (503 authentication_unavailable)"),
  });
  const routes: RouteServices = {
    ...domain,
    authenticate: authenticateBearer,
    requireRole,
    toolRun: (o: ToolRunOptions = {}) => toolRun(domain.runs, { senderCheck, ...o }),
    idempotencyKey: (routeOf) => idempotencyKey(services.idempotencyKeys, routeOf),
    // The routes ported from the legacy API pass legacySentence: their clients match on its refusal.
    requireTool: (toolId: string, o: RequireToolOptions = {}) => requireTool(manifest, toolId, (d) => domain.metrics.decision(d), o),
    mcpSessionUrl: (req) => new URL(options.mcpSessions.url, `${req.protocol}://${req.get('host') ?? 'localhost'}`).toString(),
  };
  const limitCallers = clientRateLimit(options.rateLimit, services.rateLimitStore);
  const body = jsonBody({ limit: options.bodyLimit });
  const drain = new Drain();
  const router = Router();
  router.use(routerRequestId());
  router.use(drain.middleware);
  // Tokens first, so an unknown token is a 401 that never opens a budget; then the budget, so a
  // flood is refused before its bodies are parsed.
  router.use(authenticateBearer);
  router.use(function limitClientRoutes(req, res, next) {
    const role = res.locals.toolgate?.auth?.role;
    if (role === 'admin' || role === 'scheduler') return next();
    return limitCallers(req, res, next);
  });
  router.use(body);
  mountApiRoutes(router, options.routes, routes);
  // Its own errors in its own shape, whatever handlers the host has: a database outage on an admin
  // read is a JSON 503, never Express's HTML page. Only errors raised inside the router reach this;
  // the host's routes keep their own handlers.
  router.use(errorHandler({ logger, renderAll: true }));
  return {
    routes,
    router,
    mcpEndpoint: mcpEndpoint(domain.mcpSessions, [drain.middleware, ...body], errorHandler({ logger, renderAll: true })),
    drain,
  };
}

/** The router answers its own errors with a request id, whether or not the host assigns one. */
function routerRequestId(): RequestHandler {
  const assignRequestId = requestId();
  return function routerRequestId(req, res, next) {
    if (res.locals.toolgate?.requestId) return next();
    return assignRequestId(req, res, next);
  };
}
