// What the bundled routes work with. Each router takes the few members it uses (a Pick of this), so
// a route file depends on services, never on the plugin object that mounts it.
import type { Request, RequestHandler } from 'express';
import type { Sequelize } from 'sequelize';
import type { Role } from '../middleware/auth';
import type { RouteOf } from '../middleware/idempotency-key';
import type { ToolRunOptions } from '../middleware/current-run';
import type { RequireToolOptions } from '../middleware/require-tool';
import type { MessageHandlingDeps } from '../src/agent/handle-message';
import type { ApprovalService } from '../src/approvals/approvals';
import type { Instances } from '../src/db/instances';
import type { DocumentStore } from '../src/documents/document-store';
import type { EmbeddingJob } from '../src/documents/embedding-job';
import type { VectorIndex } from '../src/documents/vector-index';
import type { EmailDeps } from '../src/email/email-deps';
import type { LanguageModel } from '../src/llm/language-model';
import type { McpServers } from '../src/mcp/mcp-servers';
import type { McpSessions } from '../src/mcp-sessions/mcp-sessions';
import type { ToolgateMetrics } from '../src/metrics/toolgate-metrics';
import type { RateLimitStoreKind } from '../src/rate-limit-options';
import type { RunService } from '../src/run/run-service';
import type { AccessRuleService } from '../src/services/access-rules';
import type { AgentService } from '../src/services/agents';
import type { AttachmentService } from '../src/services/attachments';
import type { PolicyPreviewService } from '../src/services/policy-preview';
import type { SyncReport } from '../src/services/system-toolkits';
import type { ToolkitService } from '../src/services/toolkits';
import type { TaskStore } from '../src/tasks/task-store';
import type { ToolRegistry } from '../src/tools/tool-registry';

export interface RouteServices {
  sequelize: Sequelize;
  registry: ToolRegistry;
  toolkits: ToolkitService;
  agents: AgentService;
  attachments: AttachmentService;
  accessRules: AccessRuleService;
  /** Previews of policy changes against recorded traffic (SEMANTICS §15): nothing written. */
  previews: PolicyPreviewService;
  runs: RunService;
  metrics: ToolgateMetrics;
  model: LanguageModel;
  documents: DocumentStore;
  /** Semantic search's job and engine; undefined without an embeddings provider. */
  embeddings: { job: EmbeddingJob; index: VectorIndex } | undefined;
  tasks: TaskStore;
  email: EmailDeps;
  /** What agent runs work with: the model, the tool specs, the limits and the run store. */
  agentRuns: MessageHandlingDeps;
  /** Approval requests: read and decided by operators and approvers (SEMANTICS §12). */
  approvals: ApprovalService;
  /** Reads the bearer token into res.locals.toolgate.auth (401 for one this service does not know). */
  authenticate: RequestHandler;
  requireRole(...roles: Role[]): RequestHandler;
  toolRun(options?: ToolRunOptions): RequestHandler;
  /** Honours the Idempotency-Key header on a POST that can run a tool (SEMANTICS §13), for the route routeOf names. */
  idempotencyKey(routeOf: RouteOf): RequestHandler;
  /** This instance's heartbeat; registering it also starts the sweeper (SEMANTICS §13). */
  instances: Instances;
  /** A gate tool's check before a route's handler; the routes ported from the legacy API ask for its sentence. */
  requireTool(toolId: string, options?: RequireToolOptions): RequestHandler;
  syncSystemToolkits(): Promise<SyncReport>;
  /** Where callers' budgets are counted: `postgres` (shared by every instance) or `memory` (this process). */
  limitStore: RateLimitStoreKind;
  /** The MCP servers and their pinned tools (SEMANTICS §14); none configured, it lists nothing. */
  mcp: McpServers;
  /** MCP sessions: one run's tools served to an MCP client at tg.mcpEndpoint (SEMANTICS §14). */
  mcpSessions: McpSessions;
  /** The URL a session's opening answers: the mcpSessions.url option, resolved against where the request reached. */
  mcpSessionUrl(req: Request): string;
}
