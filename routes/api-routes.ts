// Every route of the router, described for the API reference, in the order the reference shows
// them. A new route file adds its `...Routes` export here; test/openapi/openapi.test.ts fails for
// any route served but missing.
import { accessRulesRoutes } from './access-rules';
import { agentRunsRoutes } from './agent-runs';
import { agentsRoutes } from './agents';
import { approvalRequestsRoutes } from './approval-requests';
import { attachmentsRoutes } from './attachments';
import { chatRoutes } from './chat';
import { documentsRoutes } from './documents';
import { emailRoutes } from './email';
import { migrationsRoutes } from './migrations';
import { resolutionRoutes } from './resolution';
import type { RouteGroupDescription } from './route-description';
import { tasksRoutes } from './tasks';
import { dispatchRoutes, toolCallRecordsRoutes } from './tool-calls';
import { toolkitsRoutes } from './toolkits';
import { toolsRoutes } from './tools';

export const API_ROUTES: readonly RouteGroupDescription[] = [
  toolsRoutes,
  toolkitsRoutes,
  agentsRoutes,
  attachmentsRoutes,
  accessRulesRoutes,
  resolutionRoutes,
  dispatchRoutes,
  agentRunsRoutes,
  approvalRequestsRoutes,
  toolCallRecordsRoutes,
  emailRoutes,
  documentsRoutes,
  tasksRoutes,
  chatRoutes,
  migrationsRoutes,
];
