// The Express app around a toolgate: helmet, request ids, health checks, /api, the API reference
// (/openapi.json, /docs), the dashboard (/admin), and the one error handler. The service entry and
// the tests build it the same way.
import express, { type Express } from 'express';
import helmet from 'helmet';
import { errorHandler, notFoundHandler } from '../../middleware/error-handler';
import { requestId } from '../../middleware/request-id';
import { requestLogger } from '../../middleware/request-logger';
import { API_ROUTES } from '../../routes/api-routes';
import { healthRoutes } from '../../routes/health';
import { mcpEndpointRoutes } from '../../routes/mcp-endpoint';
import { metricsRoutes } from '../../routes/metrics';
import { mountRoutes } from '../../routes/route';
import type { TrustProxy } from './config';
import { dashboardRouter } from './dashboard/dashboard-router';
import { ToolgateConfigError } from '../errors';
import type { ServiceLogger } from './logger';
import { openApiDocument } from './openapi/openapi-document';
import { referenceRouter, referenceRoutes } from './openapi/reference-router';
import { internalsOf, type Toolgate } from '../toolgate';
import packageJson from '../../package.json';

// The package's version, read once: the reference names the service it describes.
const SERVICE_VERSION = packageJson.version;

export interface AppOptions {
  logger: ServiceLogger;
  /** Extra routes a host mounts under /api before the 404 handler. */
  extraApiRoutes?: express.Router[];
  /**
   * Behind a reverse proxy: whom to trust for X-Forwarded-For, so that the client routes' rate
   * limit keys anonymous callers by their own address, not the proxy's. Default: trust no proxy.
   */
  trustProxy?: TrustProxy;
  /** The operators' dashboard at /admin, signed in with the admin token. Left out without one. */
  dashboard?: { adminToken: string };
}

export function createApp(tg: Toolgate, options: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  try {
    app.set('trust proxy', options.trustProxy ?? false);
  } catch (err) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_TRUST_PROXY',
      `The trust proxy setting ${JSON.stringify(options.trustProxy)} is not valid (${(err as Error).message}): give a hop count, addresses or subnets such as "loopback, 10.0.0.0/8", or "off".`,
    );
  }
  app.use(helmet());
  app.use(requestId());
  // Probes and scrapes stay out of the logs; every other request gets one line.
  const internals = internalsOf(tg);
  app.use(mountRoutes(healthRoutes, internals));
  app.use(mountRoutes(metricsRoutes, internals, { authenticate: internals.authenticate, requireRole: internals.requireRole }));
  app.use(requestLogger(options.logger));
  app.use('/api', tg.router);
  // MCP sessions' endpoint (SEMANTICS §14): outside /api, since its tokens open nothing there.
  app.use('/mcp', tg.mcpEndpoint);
  for (const router of options.extraApiRoutes ?? []) app.use('/api', router);
  app.use(referenceRouter(apiDocument()));
  if (options.dashboard)
    app.use('/admin', dashboardRouter(internals, { adminToken: options.dashboard.adminToken, logger: options.logger }));
  app.use(notFoundHandler());
  app.use(errorHandler({ logger: options.logger, renderAll: true }));
  return app;
}

/** The service's OpenAPI document: the router's routes under /api, and the app's own. */
export function apiDocument(): Record<string, unknown> {
  return openApiDocument({
    title: 'toolgate',
    version: SERVICE_VERSION,
    description:
      'Who may make an email agent use which tool, decided per message and enforced at dispatch. Errors are `{detail, code, request_id}`; `code` is stable. Ids are positive whole numbers in plain decimal.',
    mounts: [
      { prefix: '/api', sections: API_ROUTES.map((s) => s.section) },
      { prefix: '', sections: [healthRoutes, metricsRoutes, mcpEndpointRoutes, referenceRoutes] },
    ],
  });
}
