// Every route of the router, by section, in the order the reference shows them, each with the
// route group that switches it off (`createToolgate({ routes })`). The router mounts this list and
// the OpenAPI document reads it: a new route file adds its section here, once.
import type { Router } from 'express';
import { accessRulesRoutes } from './access-rules';
import { agentRunsRoutes } from './agent-runs';
import { agentsRoutes } from './agents';
import { approvalRequestsRoutes } from './approval-requests';
import { attachmentsRoutes } from './attachments';
import { decisionsRoutes } from './decisions';
import { chatRoutes } from './chat';
import { documentsRoutes } from './documents';
import { emailRoutes } from './email';
import { embeddingsRoutes } from './embeddings';
import { mcpRoutes } from './mcp';
import { mcpSessionsRoutes } from './mcp-sessions';
import { migrationsRoutes } from './migrations';
import { policyPreviewRoutes } from './policy-preview';
import { resolutionRoutes } from './resolution';
import { mountRoutes, type MountServices, type RouteSection } from './route';
import type { RouteServices } from './route-services';
import { tasksRoutes } from './tasks';
import { dispatchRoutes, toolCallRecordsRoutes } from './tool-calls';
import { toolkitsRoutes } from './toolkits';
import { toolsRoutes } from './tools';

/** The bundled route groups, each of which `routes` can switch off. */
export const ROUTE_GROUPS = ['admin', 'dispatch', 'agent_runs', 'email', 'documents', 'tasks', 'chat', 'migrations'] as const;
export type RouteGroup = (typeof ROUTE_GROUPS)[number];

export interface ApiSection {
  group: RouteGroup;
  section: RouteSection<RouteServices>;
}

export const API_ROUTES: readonly ApiSection[] = [
  { group: 'admin', section: toolsRoutes },
  { group: 'admin', section: toolkitsRoutes },
  { group: 'admin', section: agentsRoutes },
  { group: 'admin', section: attachmentsRoutes },
  { group: 'admin', section: accessRulesRoutes },
  { group: 'admin', section: resolutionRoutes },
  { group: 'admin', section: policyPreviewRoutes },
  { group: 'dispatch', section: dispatchRoutes },
  { group: 'dispatch', section: mcpSessionsRoutes },
  { group: 'agent_runs', section: agentRunsRoutes },
  { group: 'admin', section: approvalRequestsRoutes },
  { group: 'admin', section: toolCallRecordsRoutes },
  { group: 'admin', section: decisionsRoutes },
  { group: 'admin', section: mcpRoutes },
  { group: 'email', section: emailRoutes },
  { group: 'documents', section: documentsRoutes },
  { group: 'documents', section: embeddingsRoutes },
  { group: 'tasks', section: tasksRoutes },
  { group: 'chat', section: chatRoutes },
  { group: 'migrations', section: migrationsRoutes },
];

/** Mounts the sections of the groups that are on. The router has read the bearer token already. */
export function mountApiRoutes(router: Router, groups: ReadonlySet<RouteGroup>, services: RouteServices): void {
  const mount: MountServices = { requireRole: services.requireRole, idempotencyKey: services.idempotencyKey };
  for (const { group, section } of API_ROUTES) {
    if (groups.has(group)) router.use(mountRoutes(section, services, mount));
  }
}
