// The operators' dashboard at /admin: plain HTML forms over the toolgate's own services, with no
// script at all. In order: a secure context, the session, the form body, sign-in (with its own CSRF
// check, as no session exists yet), then for the pages: a signed-in session and its CSRF check.
// Errors are pages, never JSON.
import path from 'node:path';
import express, { Router } from 'express';
import helmet from 'helmet';
import type { RouteServices } from '../../../routes/route-services';
import { unstorableBody } from '../../../middleware/json-body';
import { PostgresRateLimitStore } from '../../db/postgres-rate-limit-store';
import type { ServiceLogger } from '../logger';
import { sessionCsrf, signInCsrf } from './csrf';
import { dashboardErrors, dashboardNotFound } from './dashboard-errors';
import { JobStore } from './jobs';
import { agentPages } from './pages/agents';
import { approvalPages } from './pages/approvals';
import { insightPages } from './pages/insight';
import { mcpPages } from './pages/mcp';
import { migrationPages } from './pages/migration';
import { toolkitPages } from './pages/toolkits';
import { requireSecureContext } from './secure-context';
import { dashboardSession } from './session';
import { requireSignedIn, signInRouter } from './sign-in';

export interface DashboardOptions {
  /** The admin token: the one thing that signs an operator in. */
  adminToken: string;
  logger: ServiceLogger;
}

// No script, no frame, no plugin: styles and images from here, forms posted only to here.
const dashboardCsp = helmet.contentSecurityPolicy({
  useDefaults: false,
  directives: {
    defaultSrc: ["'none'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'"],
    formAction: ["'self'"],
    baseUri: ["'none'"],
    frameAncestors: ["'none'"],
  },
});

export function dashboardRouter(services: RouteServices, options: DashboardOptions): Router {
  const session = dashboardSession(services.sequelize, options.adminToken);
  const d = { ...services, jobs: new JobStore(services.sequelize), logger: options.logger };
  const router = Router();
  router.use(dashboardCsp);
  router.use('/assets', express.static(path.join(__dirname, 'assets'), { index: false, maxAge: '1h' }));
  router.use(requireSecureContext());
  router.use(session.middleware);
  router.use(express.urlencoded({ extended: false, limit: '100kb', parameterLimit: 2000 }));
  router.use(function storableForm(req, _res, next) {
    next(unstorableBody(req.body));
  });
  const checkSessionCsrf = sessionCsrf();
  // Wrong tokens are counted where the toolgate counts its callers: in the database unless it was
  // told to count in memory. The prefix keeps this budget apart from the client routes'.
  const failures = services.limitStore === 'postgres' ? new PostgresRateLimitStore(services.sequelize, 'sign_in') : undefined;
  router.use(
    signInRouter({
      adminToken: options.adminToken,
      formCsrf: signInCsrf(options.adminToken),
      sessionCsrf: checkSessionCsrf,
      onSignIn: () => {
        void session.prune().catch(() => undefined);
      },
      failures,
    }),
  );
  router.use(requireSignedIn());
  router.use(checkSessionCsrf);
  router.get('/', (req, res) => res.redirect(303, `${req.baseUrl}/agents`));
  router.use(agentPages(d), toolkitPages(d), approvalPages(d), insightPages(d), mcpPages(d), migrationPages(d));
  router.use(dashboardNotFound());
  router.use(dashboardErrors(options.logger));
  return router;
}
