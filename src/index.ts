// toolgate's public surface, and nothing else: the plugin and its options, what a host mounts and
// calls on a request, the errors it may meet, the models it may plug in, and the pure core a host
// may call itself. test/package/exports.test.ts pins this list.
//
//   const tg = createToolgate({ sequelize: createSequelize(databaseUrl), adminToken, tools: [lookupOrder] });
//   await tg.migrate(); await tg.syncSystemToolkits();
//   app.use('/api', tg.router);
//   app.post('/triage/:id', express.json(), tg.toolRun(), tg.requireTool('email_analyzer'), handler);
//   app.use(tg.errorHandler());

// The plugin.
export { createToolgate, ROUTE_GROUPS } from './toolgate';
export type { EnabledToolsMigrationRequest, RouteGroup, Toolgate, ToolgateOptions } from './toolgate';
export type { AgentRunLimits } from './option-bounds';
export type { AgentRunView, StepView, Stopped } from './agent/run-store';
export type { ThreadView } from './agent/thread-store';
export type { ToolgateLogger } from './toolgate-logger';
export { createSequelize } from './db/connect';
export type { CreateSequelizeOptions } from './db/connect';

// Tools, and a request's run.
export { defineTool } from './tools/tool-registry';
export type { HostTool, ToolContext, ToolImplementation } from './tools/tool-registry';
export { currentRun } from '../middleware/current-run';
export type { RunRequest, ToolRunOptions } from '../middleware/current-run';
export type { SenderCheck } from '../middleware/sender-check';
export type { CallOptions, CallOrigin, CallOutcome, CallStep, DispatchOptions, DispatchRun, ToolOutcome, ToolRun } from './run/tool-run';
export type { ApprovalRequestView, ApprovalStatus } from './core/approval-request';
export type { RunAgent } from './services/policy-loader';
export type { ToolgateRequestState } from '../middleware/request-state';
export type { AuthState, CheckHostOptions, ClientRoutes, Role, RoleOf, RoleOfAnswer } from '../middleware/auth';
export { authenticatedSender, senderAsGiven } from '../middleware/sender-check';
export type { ClientRateLimitOptions, RateLimitStoreKind } from './rate-limit-options';
export type { PolicyCacheMode, PolicyCacheSettings } from './policy-cache-options';
export type { ToolgateMetricsView } from './metrics/toolgate-metrics';

// What the services take and give.
export type { AccessRuleService } from './services/access-rules';
export type { AgentInput, AgentPatch, AgentService, AgentView } from './services/agents';
export type { AttachmentService, AttachmentView, RuleView } from './services/attachments';
export type { ToolkitInput, ToolkitPatch, ToolkitService, ToolkitView } from './services/toolkits';
export type { SyncReport } from './services/system-toolkits';
export type { AttachInput, AttachmentPatch, RuleInput } from './services/attachment-inputs';
export type { MigrationReport } from './legacy/report';

// Errors, each with a code of docs/ERRORS.md. Those only tg.router gives, and answers itself, are
// not here: a host meets them as a response, and reads their `code`.
export {
  ApprovalRequiredError,
  AuthenticationUnavailableError,
  ConflictError,
  ForbiddenError,
  HttpError,
  MigrationBusyError,
  NotDispatchableError,
  NotFoundError,
  ParityMismatchError,
  SchemaNotMigratedError,
  SenderForbiddenError,
  ToolForbiddenError,
  ToolgateConfigError,
  UnauthenticatedError,
  UnavailableError,
  UpstreamError,
  ValidationError,
} from './errors';
export type { NotOfferedReason, ValidationIssue } from './errors';

// Language models.
export { LocalModel } from './llm/local-model';
export { OpenAIModel } from './llm/openai-model';
export type { OpenAIModelOptions } from './llm/openai-model';
export { OpenAIEmbeddings } from './llm/openai-embeddings';
export type { OpenAIEmbeddingsOptions } from './llm/openai-embeddings';
export type { OpenAIClientOptions } from './llm/openai-options';
export type { Embeddings } from './llm/embeddings';
export type { EmbeddingProgress, EmbedPendingOptions } from './documents/chunk-embedder';
export type { EmbeddingJobView } from './documents/embedding-job';
export { ModelError } from './llm/language-model';
export type { GroundedAnswer, LanguageModel, ModelContext, ModelErrorKind, ModelSource } from './llm/language-model';
export type { AgentStepRequest, AgentStepResult, AgentToolCall, AgentToolSpec, AgentTurn, InboundMessage } from './llm/agent-step';
export type { DecidedRequest, RunDecisions, UndecidedRequest } from './core/run-decisions';
export type { ActionItem, EmailAnalysis, EmailCategory, ModelEmail, Priority, Sentiment } from './llm/email-analysis';

// The pure core: plain functions over plain data.
export { BUILTIN_TOOLS } from './core/tool-manifest';
export { routingKeyOf } from './core/routing-key';
export { matchesPattern, parsePattern } from './core/pattern';
export type { PatternResult } from './core/pattern';
export { decideAttachment, decideGate } from './core/gate';
export { resolveRun } from './core/resolution';
export { compilePolicy } from './core/policy-index';
export type { CompiledPolicy } from './core/compiled-policy';
export { legacyHasTool, readEnabledTools } from './core/legacy-enabled-tools';
export type { LegacyReading, UnmatchedToken } from './core/legacy-enabled-tools';
export { parseAuthenticationResults } from './core/authentication-results';
export type { AuthenticationResults, AuthenticationResultsParse, AuthResult } from './core/authentication-results';
export { authenticatedRoutingKey } from './core/sender-authentication';
export type { SenderAuthentication, SenderAuthenticationInput, SenderVerdict } from './core/sender-authentication';
export type {
  AgentPolicyData,
  AttachmentExplanation,
  AttachmentPolicy,
  GateDecision,
  GateReason,
  GateRule,
  Resolution,
  RuleKind,
  Run,
  RunKind,
  ToolDefinition,
  ToolKind,
} from './core/types';
