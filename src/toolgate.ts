// The plugin: one object holding a toolgate's registry, services and middleware factories, and a
// router with the HTTP.md routes that a host Express app mounts under /api.
import { Router, type RequestHandler } from 'express';
import type { Sequelize } from 'sequelize';
import { authenticate, requireRole, type AuthOptions, type Role } from '../middleware/auth';
import { jsonBody } from '../middleware/json-body';
import { clientRateLimit, type ClientRateLimitOptions } from '../middleware/rate-limit';
import { requireTool } from '../middleware/require-tool';
import { senderAsGiven, toolRun, type SenderCheck, type ToolRunOptions } from '../middleware/tool-run';
import { initModels } from '../models';
import { agentsRouter } from '../routes/agents';
import { attachmentsRouter } from '../routes/attachments';
import { resolutionRouter } from '../routes/resolution';
import { toolCallsRouter } from '../routes/tool-calls';
import { toolkitsRouter } from '../routes/toolkits';
import { toolsRouter } from '../routes/tools';
import { chatRouter } from '../routes/chat';
import { documentsRouter } from '../routes/documents';
import { emailRouter } from '../routes/email';
import { migrationsRouter } from '../routes/migrations';
import { tasksRouter } from '../routes/tasks';
import { DocumentStore } from './documents/document-store';
import type { EmailDeps } from './email/email-deps';
import type { LanguageModel } from './llm/language-model';
import { createLanguageModel } from './llm/select-model';
import { TaskStore } from './tasks/task-store';
import { migrateUp } from './db/migrate';
import { ToolgateConfigError } from './errors';
import { RunService } from './run/run-service';
import { AgentService } from './services/agents';
import { AttachmentService } from './services/attachments';
import { syncSystemToolkits, type SyncReport } from './services/system-toolkits';
import { ToolkitService } from './services/toolkits';
import { ToolRegistry, type HostTool } from './tools/tool-registry';

export interface ToolgateOptions extends AuthOptions {
  /** A Sequelize instance on PostgreSQL; toolgate binds its models to it. */
  sequelize: Sequelize;
  /** The host's own tools, beside the four builtins. */
  tools?: readonly HostTool[];
  /** How a message's sender counts (SEMANTICS §7). Default: taken as given. */
  senderCheck?: SenderCheck;
  /** The JSON body cap. Default `1mb`. */
  bodyLimit?: string;
  /** A per-caller budget on the client routes (admin and scheduler are not limited). Default off. */
  rateLimit?: ClientRateLimitOptions | false;
  /** The model behind analysis, replies, answers and chat. Default: from the environment (local). */
  model?: LanguageModel;
  /** Where toolgate reports what it cannot answer a request with (pino-compatible). Default: nowhere. */
  logger?: ToolgateLogger;
}

/** The little of a logger toolgate uses; a pino logger fits. */
export interface ToolgateLogger {
  error(details: Record<string, unknown>, message: string): void;
}

export interface Toolgate {
  readonly sequelize: Sequelize;
  readonly registry: ToolRegistry;
  readonly toolkits: ToolkitService;
  readonly agents: AgentService;
  readonly attachments: AttachmentService;
  readonly runs: RunService;
  readonly model: LanguageModel;
  readonly documents: DocumentStore;
  readonly tasks: TaskStore;
  /** What the email analysis and workflow use cases run with. */
  readonly email: EmailDeps;
  /** The /api routes: JSON parsing, tokens and roles included. Mount with `app.use('/api', tg.router)`. */
  readonly router: Router;
  /** Resolves the request's run once and sets `req.toolRun`. */
  toolRun(options?: ToolRunOptions): RequestHandler;
  /** Refuses a gate tool not offered to the run; lets an enhancement tool through. */
  requireTool(toolId: string): RequestHandler;
  /** Admits the listed roles (HTTP.md, "Who may call"). */
  requireRole(...roles: Role[]): RequestHandler;
  /** Applies pending schema migrations. */
  migrate(): Promise<string[]>;
  /** Creates or refreshes the system toolkits (All Tools, Default Tools). */
  syncSystemToolkits(): Promise<SyncReport>;
}

/**
 * Builds a toolgate. Options are checked here, once: a bad one throws a ToolgateConfigError now,
 * not on the first request.
 *
 * @example
 * const tg = createToolgate({ sequelize, adminToken: process.env.TOOLGATE_ADMIN_TOKEN });
 * await tg.migrate(); await tg.syncSystemToolkits();
 * app.use('/api', tg.router);
 * app.post('/my/:id/triage', tg.toolRun(), tg.requireTool('email_analyzer'), handler);
 */
export function createToolgate(options: ToolgateOptions): Toolgate {
  if (!options.sequelize || options.sequelize.getDialect() !== 'postgres') {
    throw new ToolgateConfigError('ERR_TOOLGATE_DATABASE', 'createToolgate() needs a Sequelize instance on PostgreSQL (dialect "postgres").');
  }
  const sequelize = options.sequelize;
  initModels(sequelize);
  const registry = new ToolRegistry(options.tools ?? []);
  const manifest = registry.manifest;
  const logger = options.logger;
  const runs = new RunService(sequelize, registry, (err, context) => {
    logger?.error({ ...context, err: err instanceof Error ? { name: err.name } : typeof err }, 'a tool ran, but its outcome could not be recorded: its record stays started');
  });
  const senderCheck = options.senderCheck ?? senderAsGiven;
  const model = options.model ?? createLanguageModel(process.env);
  const tasks = new TaskStore(sequelize);

  const base = {
    sequelize,
    registry,
    toolkits: new ToolkitService(sequelize, manifest),
    agents: new AgentService(sequelize, manifest),
    attachments: new AttachmentService(sequelize, manifest),
    runs,
    model,
    documents: new DocumentStore(sequelize),
    tasks,
    email: { model, tasks, now: () => new Date() },
    toolRun: (o: ToolRunOptions = {}) => toolRun(runs, { senderCheck, ...o }),
    requireTool: (toolId: string) => requireTool(manifest, toolId),
    requireRole,
    migrate: () => migrateUp(sequelize),
    syncSystemToolkits: () => syncSystemToolkits(sequelize, manifest),
  };

  const router = Router();
  const limitCallers = clientRateLimit(options.rateLimit ?? false);
  // Tokens first, so an unknown token is a 401 that never opens a budget; then the budget, so a
  // flood is refused before its bodies are parsed.
  router.use(authenticate(options));
  router.use(function limitClientRoutes(req, res, next) {
    if (req.auth?.role === 'admin' || req.auth?.role === 'scheduler') return next();
    return limitCallers(req, res, next);
  });
  router.use(jsonBody({ limit: options.bodyLimit ?? '1mb' }));
  const toolgate: Toolgate = { ...base, router };
  router.use(toolsRouter(toolgate));
  router.use(toolkitsRouter(toolgate));
  router.use(agentsRouter(toolgate));
  router.use(attachmentsRouter(toolgate));
  router.use(resolutionRouter(toolgate));
  router.use(toolCallsRouter(toolgate));
  router.use(migrationsRouter(toolgate));
  router.use(emailRouter(toolgate));
  router.use(documentsRouter(toolgate));
  router.use(tasksRouter(toolgate));
  router.use(chatRouter(toolgate));
  return toolgate;
}
