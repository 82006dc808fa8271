// The plugin: createToolgate() checks its options once, builds the services
// (toolgate-services.ts), then the router on them (toolgate-router.ts), and hands back a thin facade:
// the middleware a host mounts, the services an operator's code calls, and the router.
import type { ErrorRequestHandler, RequestHandler, Router } from 'express';
import { checkHost, requireRole, type CheckHostOptions, type Role } from '../middleware/auth';
import type { ToolRunOptions } from '../middleware/current-run';
import { errorHandler } from '../middleware/error-handler';
import type { RouteServices } from '../routes/route-services';
import { ROUTE_GROUPS, type RouteGroup } from '../routes/api-routes';
import type { Resolution, Run, ToolDefinition } from './core/types';
import type { EmbeddingProgress, EmbedPendingOptions } from './documents/chunk-embedder';
import type { EmbeddingJobView } from './documents/embedding-job';
import { ToolgateConfigError } from './errors';
import { migrateEnabledTools } from './legacy/migrate-enabled-tools';
import type { MigrationReport } from './legacy/report';
import type { ToolgateMetricsView } from './metrics/toolgate-metrics';
import type { AccessRuleService } from './services/access-rules';
import type { AgentService } from './services/agents';
import type { AttachmentService } from './services/attachments';
import type { SyncReport } from './services/system-toolkits';
import type { ToolkitService } from './services/toolkits';
import { warnSendersAsGiven } from './senders-as-given';
import { checkToolgateOptions, type ToolgateOptions } from './toolgate-options';
import { toolgateRouter } from './toolgate-router';
import { toolgateServices } from './toolgate-services';

export { ROUTE_GROUPS };
export type { RouteGroup };

export type { ToolgateOptions } from './toolgate-options';

/** What `migrateEnabledTools()` does: a dry run (the default) or the applied, verified migration. */
export interface EnabledToolsMigrationRequest {
  dryRun?: boolean;
  /** Grant what a typo most likely meant (`Email_Analyzer` → email_analyzer). Default false. */
  mapTypos?: boolean;
}

export interface Toolgate {
  /** The HTTP routes (JSON parsing, tokens and roles included). Mount with `app.use('/api', tg.router)`. */
  readonly router: Router;
  /**
   * The MCP endpoint (SEMANTICS §14): Streamable HTTP for the MCP sessions POST
   * /agents/:id/mcp-sessions opens, each reached with its own bearer token and no other. Mount it
   * where the `mcpSessions.url` option says, `app.use('/mcp', tg.mcpEndpoint)` by default.
   */
  readonly mcpEndpoint: Router;
  /** The tool manifest: the four builtins, the host's tools, and the MCP servers' pinned tools (once started). */
  readonly tools: readonly ToolDefinition[];
  readonly toolkits: ToolkitService;
  readonly agents: AgentService;
  readonly attachments: AttachmentService;
  /** The agents' own access rules: which senders each agent handles at all (SEMANTICS §9). */
  readonly accessRules: AccessRuleService;
  /** Resolves the request's run once; read it with currentRun(req). Needs the JSON body parsed. */
  toolRun(options?: ToolRunOptions): RequestHandler;
  /** Refuses a gate tool not offered to the run (403 tool_forbidden); lets an enhancement through. */
  requireTool(toolId: string): RequestHandler;
  /**
   * Refuses a request whose Host (or X-Forwarded-Host) is not a loopback name, an IP address or an
   * allowed host (421 host_not_allowed), as the open client routes do: mount it first on a host route
   * that serves callers with no credential, so a web page cannot reach it by DNS rebinding.
   */
  checkHost(options?: CheckHostOptions): RequestHandler;
  /** Admits the listed roles (the router's bearer tokens must have been read first). */
  requireRole(...roles: Role[]): RequestHandler;
  /** Renders toolgate's errors as JSON ({detail, code, ...}); passes every other error on. Mount last. */
  errorHandler(): ErrorRequestHandler;
  /** Which tools a run of this agent is offered, and why: the explanation view. */
  explain(agentId: number, run: Run): Promise<Resolution>;
  /**
   * Applies pending schema migrations, then indexes documents that have no search chunks yet, and,
   * with embeddings, uses pgvector's HNSW index where the server has the extension. Refuses, with
   * nothing changed, a database holding a table of one of toolgate's names that toolgate did not
   * create, unless `adoptLegacyTables` says to adopt the legacy application's (HostTablesError).
   */
  migrate(): Promise<string[]>;
  /** How many chunks hold a vector of the configured embeddings; null without embeddings. */
  embeddingProgress(): Promise<EmbeddingProgress | null>;
  /**
   * The re-embedding job: embeds every chunk with no vector of the configured model and dimensions,
   * in batches, and returns how many it wrote. Safe from several instances at once; a killed run
   * loses at most its batch in flight, and the next run resumes. Without embeddings, 0.
   */
  embedPending(request?: Pick<EmbedPendingOptions, 'onBatch' | 'signal'>): Promise<number>;
  /** Starts embedPending in the background on this instance, unless it runs already (null without embeddings). */
  reembed(): EmbeddingJobView | null;
  /**
   * Reads the MCP servers' pinned tools into the manifest, then connects to the servers and waits
   * for each one's first listing (SEMANTICS §14). Once; syncSystemToolkits() calls it first.
   */
  startMcp(): Promise<void>;
  /** Creates or refreshes the system toolkits (All Tools, Default Tools), after startMcp(). Run it on every deploy. */
  syncSystemToolkits(): Promise<SyncReport>;
  /** Turns agents' legacy `enabled_tools` strings into toolkits, with the same access (SEMANTICS §6). */
  migrateEnabledTools(request?: EnabledToolsMigrationRequest): Promise<MigrationReport>;
  /** Decisions, gate latency, the policy cache, the listener, tool calls and the pool, in the Prometheus format. */
  readonly metrics: ToolgateMetricsView;
  /**
   * Shutting down (SEMANTICS §13): the router takes no new requests (503 shutting_down) and this
   * waits, at most `timeoutMs`, for the ones it is serving. Then call close().
   */
  drain(timeoutMs: number): Promise<{ drained: boolean; left: number }>;
  /**
   * Stops what runs in the background (the policy listener, the rate limit's pruning, the heartbeat,
   * the sweeper, the re-embedding job, an HNSW build and the MCP servers). Does not close the host's
   * Sequelize; with a `schema`, closes the pool toolgate opened for it.
   */
  close(): Promise<void>;
}

const internals = new WeakMap<Toolgate, RouteServices>();

/** The parts behind a toolgate, for the service and the tests of this repository; not exported. */
export function internalsOf(tg: Toolgate): RouteServices {
  const parts = internals.get(tg);
  if (!parts) throw new ToolgateConfigError('ERR_TOOLGATE_NOT_A_TOOLGATE', 'internalsOf() takes what createToolgate() returned.');
  return parts;
}

/**
 * Builds a toolgate. Options are checked here, once: a bad one throws a ToolgateConfigError now,
 * not on the first request. The facade keeps nothing of its own: each member hands on to what the two
 * steps built.
 *
 * @example
 * const tg = createToolgate({ sequelize: createSequelize(databaseUrl), adminToken, tools: [lookupOrder] });
 * await tg.migrate(); await tg.syncSystemToolkits();
 * app.use('/api', tg.router);
 * app.post('/my/:id/triage', express.json(), tg.toolRun(), tg.requireTool('email_analyzer'), handler);
 * app.use(tg.errorHandler());
 */
export function createToolgate(given: ToolgateOptions): Toolgate {
  const options = checkToolgateOptions(given);
  const services = toolgateServices(options);
  const { routes, router, mcpEndpoint, drain } = toolgateRouter(services, options);
  const { sequelize, registry, documents, runs, metrics, mcp } = services.domain;
  const embeddingJob = services.domain.embeddings?.job;
  const tg: Toolgate = {
    router,
    mcpEndpoint,
    get tools() {
      return registry.manifest.list();
    },
    toolkits: routes.toolkits,
    agents: routes.agents,
    attachments: routes.attachments,
    accessRules: routes.accessRules,
    toolRun: routes.toolRun,
    // One argument, as the host calls it: the legacy sentence is the bundled routes' alone.
    requireTool: (toolId) => routes.requireTool(toolId),
    checkHost: (o) => checkHost(options.auth, o),
    requireRole,
    errorHandler: () => errorHandler({ logger: options.logger }),
    explain: (agentId, run) => runs.explain(agentId, run),
    migrate: () => services.migrate(),
    embeddingProgress: async () => (documents.embedder ? documents.embedder.progress() : null),
    embedPending: async (request = {}) => (documents.embedder ? documents.embedder.embedPending(request) : 0),
    reembed: () => embeddingJob?.start() ?? null,
    startMcp: () => mcp.start(),
    syncSystemToolkits: routes.syncSystemToolkits,
    migrateEnabledTools: (request = {}) =>
      migrateEnabledTools(sequelize, registry.manifest, {
        mode: request.dryRun === false ? 'apply' : 'dry_run',
        mapTypos: request.mapTypos ?? false,
      }),
    metrics,
    drain: (timeoutMs) => drain.drain(timeoutMs),
    close: () => services.close(),
  };
  internals.set(tg, routes);
  // Last, so a toolgate that failed to build says nothing of how it would have taken senders.
  if (!options.senders.chosen) warnSendersAsGiven(options.logger);
  return tg;
}
