// The plugin: createToolgate() checks its options once, binds its models to the host's Sequelize,
// and hands back the middleware a host mounts, the services an operator's code calls, and a router
// with the HTTP routes, each group of which can be switched off.
import { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import type { Sequelize } from 'sequelize';
import { authenticate, checkHost, requireRole, type CheckHostOptions, type Role } from '../middleware/auth';
import { Drain } from '../middleware/drain';
import { errorHandler } from '../middleware/error-handler';
import { errorFields } from '../middleware/error-handler';
import { requestId } from '../middleware/request-id';
import { idempotencyKey } from '../middleware/idempotency-key';
import { jsonBody } from '../middleware/json-body';
import { clientRateLimit } from '../middleware/rate-limit';
import { requireTool } from '../middleware/require-tool';
import { toolRun, type ToolRunOptions } from '../middleware/current-run';
import { defineModels } from '../models';
import type { RouteServices } from '../routes/route-services';
import { mountApiRoutes, ROUTE_GROUPS, type RouteGroup } from '../routes/api-routes';
import { RunStore } from './agent/run-store';
import { ApprovalStore } from './approvals/approval-store';
import { ApprovalService } from './approvals/approvals';
import type { Resolution, Run, ToolDefinition } from './core/types';
import { dedicatedClient } from './db/dedicated-client';
import { NotificationsUndeliveredError } from './db/policy-listener';
import { Instances } from './db/instances';
import { migrateUp } from './db/migrate';
import { policyChannel, schemaOf, sequelizeInSchema } from './db/schema';
import { PostgresRateLimitStore } from './db/postgres-rate-limit-store';
import type { EmbeddingProgress, EmbedPendingOptions } from './documents/chunk-embedder';
import { DocumentStore } from './documents/document-store';
import { EmbeddingJob, type EmbeddingJobView } from './documents/embedding-job';
import { VectorIndex } from './documents/vector-index';
import { ToolgateConfigError } from './errors';
import { migrateEnabledTools } from './legacy/migrate-enabled-tools';
import type { MigrationReport } from './legacy/report';
import { LocalModel } from './llm/local-model';
import { ToolgateMetrics, type ToolgateMetricsView } from './metrics/toolgate-metrics';
import { ToolgateTracing } from './tracing/toolgate-tracing';
import type { PolicyCacheConfig } from './policy-cache-options';
import type { RateLimitStoreKind } from './rate-limit-options';
import { ListenedPolicies, type Invalidation } from './run/listened-policies';
import type { PolicyRead, PolicySource } from './run/policy-source';
import { RunService } from './run/run-service';
import { Sweeper } from './run/sweeper';
import { AccessRuleService } from './services/access-rules';
import { PolicyPreviewService } from './services/policy-preview';
import { VersionedPolicies } from './run/versioned-policies';
import { loadPolicyVersion } from './services/policy-loader';
import { AgentService } from './services/agents';
import { AttachmentService } from './services/attachments';
import { IdempotencyKeys } from './services/idempotency-keys';
import { syncSystemToolkits, type SyncReport } from './services/system-toolkits';
import { ToolkitService } from './services/toolkits';
import { warnSendersAsGiven } from './senders-as-given';
import { TaskStore } from './tasks/task-store';
import type { ToolgateLogger } from './toolgate-logger';
import { checkToolgateOptions, type ToolgateOptions } from './toolgate-options';
import { McpServers } from './mcp/mcp-servers';
import { PinnedToolStore } from './mcp/pinned-tool-store';
import { McpSessions } from './mcp-sessions/mcp-sessions';
import { McpSessionStore } from './mcp-sessions/mcp-session-store';
import { mcpEndpoint } from '../middleware/mcp-endpoint';
import { builtinTools } from './tools/builtin-tools';
import { ToolRegistry } from './tools/tool-registry';

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
 * not on the first request.
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
  const groups = options.routes;
  const { limits, messageIdDomain } = options.agentRuns;
  const approvalExpiryMs = options.approvals;
  const recovery = options.recovery;
  // With a schema of its own, toolgate works on a Sequelize whose connections search that schema
  // alone (src/db/schema.ts); the host's stays the host's, for its tools among others.
  const hostSequelize = options.sequelize;
  const schema = options.schema ?? schemaOf(hostSequelize);
  const sequelize = schema === null ? hostSequelize : sequelizeInSchema(hostSequelize, schema);
  const ownPool = sequelize !== hostSequelize;
  const models = defineModels(sequelize);
  const model = options.model ?? new LocalModel();
  const tasks = new TaskStore(sequelize);
  const logger = options.logger;
  const vectorIndex = new VectorIndex(sequelize, (err) =>
    logger?.warn?.({ err: errorFields(err) }, 'the HNSW index for semantic search could not be built: pgvector ranks without it'),
  );
  const documents = new DocumentStore(sequelize, {
    ...(options.embeddings ? { embeddings: options.embeddings } : {}),
    vectorEngine: vectorIndex.engine,
    onEmbeddingFailure: (err) =>
      logger?.warn?.(
        { err: errorFields(err) },
        'the embeddings provider failed: searches go by words only, and the job embeds the chunks later',
      ),
  });
  const embeddingJob = documents.embedder
    ? new EmbeddingJob(documents.embedder, (err) =>
        logger?.error({ err: errorFields(err) }, 'the re-embedding job stopped: run it again to resume where it stopped'),
      )
    : undefined;
  const now = () => new Date();
  const registry = new ToolRegistry(options.tools, builtinTools({ model, documents, tasks, now }));
  const manifest = registry.manifest;
  const mcp = new McpServers(options.mcp, {
    store: new PinnedToolStore(sequelize),
    registry,
    env: process.env,
    logger,
    // Compiled policies know which member ids are live: one compiled before an MCP tool came or went is stale.
    onManifestChanged: () => runs.policies.clear?.(),
  });
  const cacheConfig = options.policyCache;
  const tracing = options.tracing === false ? undefined : new ToolgateTracing(options.tracing);
  const rateLimit = options.rateLimit;
  const metrics = new ToolgateMetrics(sequelize);
  const approvalStore = new ApprovalStore(sequelize, (count) => metrics.approvals('expired', count));
  const instances = new Instances(sequelize, { heartbeatMs: recovery.heartbeatMs, staleAfterMs: recovery.staleAfterMs });
  const runs = new RunService(sequelize, registry, {
    toolSequelize: hostSequelize,
    approvals: { store: approvalStore, expiryMs: approvalExpiryMs },
    instances,
    graceMs: recovery.graceMs,
    onRecordError: (err, context) => {
      logger?.error(
        { ...context, err: recordErrorFields(err) },
        'a tool ran, but its outcome could not be recorded: its record stays started',
      );
    },
    onFault: (err, context) => {
      logger?.error(
        { ...context, err: errorFields(err) },
        context.stage === 'shadow'
          ? "a candidate's shadow could not be worked out: the record goes without it, and the live decision stands"
          : "toolgate's own fault after a tool ran: answered with what ran, not a 5xx",
      );
    },
    policies: policySources(sequelize, cacheConfig, metrics, logger, policyChannel(schema)),
    observer: {
      gate: (s, cache) => metrics.gate(s, cache),
      hit: () => metrics.hit(),
      decision: (d) => metrics.decision(d),
      toolCall: (status) => metrics.toolCall(status),
      approvalFiled: () => metrics.approvals('requested'),
    },
    ...(mcp.configured ? { withheld: mcp.withheld } : {}),
    ...(tracing ? { tracing } : {}),
  });
  const mcpSessions = new McpSessions(
    {
      store: new McpSessionStore(sequelize),
      runs,
      spec: (id) => registry.spec(id),
      onFault: (err) => logger?.warn?.({ err: errorFields(err) }, 'an MCP session could not be served: nothing ran'),
    },
    options.mcpSessions,
  );
  // A change this instance hears of is told to its MCP sessions at once, not at their next poll.
  if (runs.policies instanceof ListenedPolicies) {
    runs.policies.on('invalidated', (i: Invalidation) => mcpSessions.policyChanged(i.agentIds));
  }
  const runStore = new RunStore(sequelize, instances);
  const sweeper = new Sweeper(sequelize, instances, {
    intervalMs: recovery.sweepIntervalMs,
    graceMs: recovery.graceMs,
    inFlight: { records: () => [...runs.inFlight], runs: () => [...runStore.open] },
    retention: options.retention,
    onSwept: (swept) => logger?.info?.({ ...swept }, 'the sweeper closed what a stopped instance left open and dropped what expired'),
    onKept: (kept) => logger?.info?.({ kept }, 'the retention kept partitions that hold what is still under way'),
    onError: (err) =>
      logger?.warn?.({ err: err instanceof Error ? { name: err.name } : typeof err }, 'the sweeper could not sweep: it tries again'),
  });
  // An instance sweeps once it holds anything: a toolgate that never runs a tool never sweeps.
  instances.onRegistered(() => sweeper.start());
  const approvals = new ApprovalService(runs, approvalStore, (outcome) => metrics.approvals(outcome));
  metrics.countEntries(() => runs.cachedAgents);
  metrics.countMcp(
    () => mcp.servers(),
    () => mcpSessions.connections,
  );
  const senderCheck = options.senders.check;
  const authenticateBearer = authenticate(options.auth, {
    onRoleOfError: (err) =>
      logger?.error({ err: errorFields(err) }, "the host's roleOf failed: the request was refused (503 authentication_unavailable)"),
  });
  // Where callers are counted: the client limit's store, and the dashboard's count of wrong tokens.
  const limitStore: RateLimitStoreKind = rateLimit !== false && rateLimit.store === 'memory' ? 'memory' : 'postgres';
  const rateLimitStore = rateLimit !== false && limitStore === 'postgres' ? new PostgresRateLimitStore(sequelize) : undefined;
  const limitCallers = clientRateLimit(rateLimit, rateLimitStore);
  const body = jsonBody({ limit: options.bodyLimit });
  const idempotencyKeys = new IdempotencyKeys(sequelize, instances);

  const parts: RouteServices = {
    sequelize,
    registry,
    toolkits: new ToolkitService(sequelize, manifest, models),
    agents: new AgentService(sequelize, manifest, models),
    attachments: new AttachmentService(sequelize, manifest, models),
    accessRules: new AccessRuleService(models),
    previews: new PolicyPreviewService(sequelize, manifest, mcp.configured ? mcp.withheld : undefined),
    runs,
    metrics,
    model,
    documents,
    embeddings: embeddingJob ? { job: embeddingJob, index: vectorIndex } : undefined,
    tasks,
    email: { model, tasks, now },
    approvals,
    agentRuns: { model, registry, limits, now, approvals, messageIdDomain, store: runStore, ...(tracing ? { tracing } : {}) },
    authenticate: authenticateBearer,
    requireRole,
    toolRun: (o: ToolRunOptions = {}) => toolRun(runs, { senderCheck, ...o }),
    idempotencyKey: (routeOf) => idempotencyKey(idempotencyKeys, routeOf),
    instances,
    requireTool: (toolId: string) => requireTool(manifest, toolId, (d) => metrics.decision(d)),
    syncSystemToolkits: async () => {
      await mcp.start();
      return syncSystemToolkits(sequelize, models, manifest);
    },
    limitStore,
    mcp,
    mcpSessions,
    mcpSessionUrl: (req) => new URL(options.mcpSessions.url, `${req.protocol}://${req.get('host') ?? 'localhost'}`).toString(),
  };

  const router = Router();
  const drain = new Drain();
  // The router answers its own errors (below) with a request id, whether or not the host assigns one.
  const assignRequestId = requestId();
  router.use(function routerRequestId(req, res, next) {
    if (res.locals.toolgate?.requestId) return next();
    return assignRequestId(req, res, next);
  });
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
  // The routes ported from the legacy API refuse a gate tool with its sentence, which their clients match on.
  const legacy: RouteServices = {
    ...parts,
    requireTool: (toolId: string) => requireTool(manifest, toolId, (d) => metrics.decision(d), { legacySentence: true }),
  };
  mountApiRoutes(router, groups, { parts, legacy });
  // Its own errors in its own shape, whatever handlers the host has: a database outage on an admin
  // read is a JSON 503, never Express's HTML page. Only errors raised inside the router reach this;
  // the host's routes keep their own handlers.
  router.use(errorHandler({ logger, renderAll: true }));

  const tg: Toolgate = {
    router,
    mcpEndpoint: mcpEndpoint(mcpSessions, [drain.middleware, ...body], errorHandler({ logger, renderAll: true })),
    get tools() {
      return manifest.list();
    },
    toolkits: parts.toolkits,
    agents: parts.agents,
    attachments: parts.attachments,
    accessRules: parts.accessRules,
    toolRun: parts.toolRun,
    requireTool: parts.requireTool,
    checkHost: (o) => checkHost(options.auth, o),
    requireRole,
    errorHandler: () => errorHandler({ logger }),
    explain: (agentId, run) => runs.explain(agentId, run),
    migrate: async () => {
      const applied = await migrateUp(sequelize, { adoptLegacyTables: options.adoptLegacyTables === true });
      await documents.indexUnchunked();
      if (documents.embedder) await vectorIndex.prepare(documents.embedder.space());
      return applied;
    },
    embeddingProgress: async () => (documents.embedder ? documents.embedder.progress() : null),
    embedPending: async (request = {}) => (documents.embedder ? documents.embedder.embedPending(request) : 0),
    reembed: () => embeddingJob?.start() ?? null,
    startMcp: () => mcp.start(),
    syncSystemToolkits: parts.syncSystemToolkits,
    migrateEnabledTools: (request = {}) =>
      migrateEnabledTools(sequelize, manifest, {
        mode: request.dryRun === false ? 'apply' : 'dry_run',
        mapTypos: request.mapTypos ?? false,
      }),
    metrics,
    drain: (timeoutMs) => drain.drain(timeoutMs),
    close: async () => {
      await embeddingJob?.stop();
      await vectorIndex.stop();
      rateLimitStore?.shutdown();
      sweeper.stop();
      await mcpSessions.stop();
      await mcp.close();
      await runs.close();
      // Said so others need not wait for the heartbeat to go stale; a database that is gone is no matter.
      await instances.stop().catch(() => undefined);
      if (ownPool) await sequelize.close().catch(() => undefined);
    },
  };
  internals.set(tg, parts);
  // Last, so a toolgate that failed to build says nothing of how it would have taken senders.
  if (!options.senders.chosen) warnSendersAsGiven(logger);
  return tg;
}

/** The policy source for the cache mode, told to the metrics (and the logger, when the listener is lost). */
function policySources(
  sequelize: Sequelize,
  config: PolicyCacheConfig,
  metrics: ToolgateMetrics,
  logger: ToolgateLogger | undefined,
  channel: string,
): ((read: PolicyRead) => PolicySource) | undefined {
  const cache = { maxAgents: config.maxAgents, maxAgeMs: config.maxAgeMs };
  switch (config.mode) {
    case 'off':
      return undefined;
    case 'strict':
      return (read) => new VersionedPolicies(read, (agentId) => loadPolicyVersion(sequelize, agentId), cache);
    case 'listen':
      return (read) => {
        const client = () => dedicatedClient(sequelize, { keepAlive: true, application_name: 'toolgate policy listener' });
        const policies = new ListenedPolicies(sequelize, read, client, { ...cache, listener: config.listener, channel });
        policies.on('invalidated', (i: Invalidation) => metrics.invalidated(i.source));
        policies.on('connecting', () => metrics.listener('connecting'));
        policies.on('closed', () => metrics.listener('closed'));
        policies.on('listening', () => {
          metrics.listener('listening');
          logger?.info?.({}, 'the policy listener holds: compiled policies are cached');
        });
        policies.on('lost', (err: unknown) => {
          metrics.listener('lost');
          // The error's name and code only: the driver's messages are not toolgate's to pass on.
          const code = (err as { code?: unknown } | undefined)?.code;
          logger?.warn?.(
            { err: err instanceof Error ? { name: err.name, code: typeof code === 'string' ? code : undefined } : typeof err },
            // This one is toolgate's own, and names the likely cause (a pooler that drops notifications).
            err instanceof NotificationsUndeliveredError
              ? `the policy listener is not told of changes: ${err.message}`
              : 'the policy listener lost its connection: runs read through the database until it is back',
          );
        });
        return policies;
      };
    default:
      throw new ToolgateConfigError('ERR_TOOLGATE_POLICY_CACHE', `Unknown policy cache mode ${JSON.stringify(config.mode)}.`);
  }
}

/**
 * What the log says of a record that could not be completed: the error's kind and SQLSTATE, never
 * its message (which may quote the tool's words). The statement's error is node-postgres's own, or
 * Sequelize's around it.
 */
function recordErrorFields(err: unknown): { name: string; code?: string } | string {
  if (!(err instanceof Error)) return typeof err;
  const cause = (err as { parent?: unknown }).parent ?? err;
  const code = (cause as { code?: unknown }).code;
  return typeof code === 'string' ? { name: err.name, code } : { name: err.name };
}
