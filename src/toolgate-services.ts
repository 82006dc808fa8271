// createToolgate()'s first step: the domain services, built once from the checked options on
// toolgate's Sequelize, with what they start in the background and how that stops.
import type { Sequelize } from 'sequelize';
import type { RouteServices } from '../routes/route-services';
import { errorFields } from '../middleware/error-handler';
import { defineModels } from '../models';
import { RunStore } from './agent/run-store';
import { ThreadStore } from './agent/thread-store';
import { ApprovalStore } from './approvals/approval-store';
import { ApprovalService } from './approvals/approvals';
import { Instances } from './db/instances';
import { migrateUp } from './db/migrate';
import { PostgresRateLimitStore } from './db/postgres-rate-limit-store';
import { schemaOf, sequelizeInSchema } from './db/schema';
import { DocumentStore } from './documents/document-store';
import { EmbeddingJob } from './documents/embedding-job';
import { VectorIndex } from './documents/vector-index';
import { LocalModel } from './llm/local-model';
import { McpServers } from './mcp/mcp-servers';
import { PinnedToolStore } from './mcp/pinned-tool-store';
import { McpSessions } from './mcp-sessions/mcp-sessions';
import { McpSessionStore } from './mcp-sessions/mcp-session-store';
import { ToolgateMetrics } from './metrics/toolgate-metrics';
import type { RateLimitStoreKind } from './rate-limit-options';
import { ListenedPolicies, type Invalidation } from './run/listened-policies';
import { Sweeper, type SweeperOptions } from './run/sweeper';
import { AccessRuleService } from './services/access-rules';
import { AgentService } from './services/agents';
import { AttachmentService } from './services/attachments';
import { IdempotencyKeys } from './services/idempotency-keys';
import { PolicyPreviewService } from './services/policy-preview';
import { syncSystemToolkits } from './services/system-toolkits';
import { ToolkitService } from './services/toolkits';
import { TaskStore } from './tasks/task-store';
import type { CheckedToolgateOptions } from './toolgate-options';
import { toolgateRunService } from './toolgate-run-service';
import { builtinTools } from './tools/builtin-tools';
import { ToolRegistry } from './tools/tool-registry';
import { ToolgateTracing } from './tracing/toolgate-tracing';
import { tracedModel } from './tracing/traced-model';

/** The members of RouteServices that read a request: the router step builds them from these services. */
export type RequestMiddleware = 'authenticate' | 'requireRole' | 'toolRun' | 'idempotencyKey' | 'requireTool' | 'mcpSessionUrl';

/** What the routes use that serves no request by itself: RouteServices without its middleware. */
export type DomainServices = Omit<RouteServices, RequestMiddleware>;

export interface ToolgateServices {
  domain: DomainServices;
  /** The replies kept for an Idempotency-Key, which the router step's middleware reads and writes. */
  idempotencyKeys: IdempotencyKeys;
  /** The client budgets' shared store; undefined with the memory store, or with no limit. */
  rateLimitStore: PostgresRateLimitStore | undefined;
  /** Pending schema migrations, then the documents' search chunks and, with embeddings, the HNSW index. */
  migrate(): Promise<string[]>;
  /** Stops what the services run in the background, and the pool toolgate opened for its own schema. */
  close(): Promise<void>;
}

export function toolgateServices(options: CheckedToolgateOptions): ToolgateServices {
  const logger = options.logger;
  const recovery = options.recovery;
  // With a schema of its own, toolgate works on a Sequelize whose connections search that schema
  // alone (src/db/schema.ts); the host's stays the host's, for its tools among others.
  const hostSequelize = options.sequelize;
  const schema = options.schema ?? schemaOf(hostSequelize);
  const sequelize = schema === null ? hostSequelize : sequelizeInSchema(hostSequelize, schema);
  const ownPool = sequelize !== hostSequelize;
  const models = defineModels(sequelize);
  // Every call to the model a `chat` span (SEMANTICS §16), the host's own model's too, unless tracing is off.
  const givenModel = options.model ?? new LocalModel();
  const model = options.tracing === false ? givenModel : tracedModel(givenModel, options.tracing);
  const tasks = new TaskStore(sequelize);
  const { vectorIndex, documents, embeddingJob } = searchServices(sequelize, options);
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
  const tracing = options.tracing === false ? undefined : new ToolgateTracing(options.tracing);
  const metrics = new ToolgateMetrics(sequelize);
  const approvalStore = new ApprovalStore(sequelize, (count) => metrics.approvals('expired', count));
  const instances = new Instances(sequelize, { heartbeatMs: recovery.heartbeatMs, staleAfterMs: recovery.staleAfterMs });
  const runs = toolgateRunService({ sequelize, hostSequelize, schema, registry, approvalStore, instances, metrics, mcp, tracing, options });
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
  const runStore = new RunStore(sequelize, instances, new ThreadStore(sequelize));
  const sweeper = toolgateSweeper(sequelize, instances, options, { records: () => [...runs.inFlight], runs: () => [...runStore.open] });
  // An instance sweeps once it holds anything: a toolgate that never runs a tool never sweeps.
  instances.onRegistered(() => sweeper.start());
  const approvals = new ApprovalService(runs, approvalStore, (outcome) => metrics.approvals(outcome));
  metrics.countEntries(() => runs.cachedAgents);
  metrics.countMcp(
    () => mcp.servers(),
    () => mcpSessions.connections,
  );
  // Where callers are counted: the client limit's store, and the dashboard's count of wrong tokens.
  const rateLimit = options.rateLimit;
  const limitStore: RateLimitStoreKind = rateLimit !== false && rateLimit.store === 'memory' ? 'memory' : 'postgres';
  const rateLimitStore = rateLimit !== false && limitStore === 'postgres' ? new PostgresRateLimitStore(sequelize) : undefined;
  const { limits, messageIdDomain } = options.agentRuns;

  const domain: DomainServices = {
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
    instances,
    syncSystemToolkits: async () => {
      await mcp.start();
      return syncSystemToolkits(sequelize, models, manifest);
    },
    limitStore,
    mcp,
    mcpSessions,
  };
  return {
    domain,
    idempotencyKeys: new IdempotencyKeys(sequelize, instances),
    rateLimitStore,
    migrate: async () => {
      const applied = await migrateUp(sequelize, { adoptLegacyTables: options.adoptLegacyTables === true });
      await documents.indexUnchunked();
      if (documents.embedder) await vectorIndex.prepare(documents.embedder.space());
      return applied;
    },
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
}

/** Documents and their search: the HNSW index, the store, and the re-embedding job when there are embeddings. */
function searchServices(sequelize: Sequelize, options: CheckedToolgateOptions) {
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
  return { vectorIndex, documents, embeddingJob };
}

/** The sweeper, which closes what a stopped instance left open and drops what the retention expired. */
function toolgateSweeper(
  sequelize: Sequelize,
  instances: Instances,
  options: CheckedToolgateOptions,
  inFlight: SweeperOptions['inFlight'],
): Sweeper {
  const logger = options.logger;
  const recovery = options.recovery;
  return new Sweeper(sequelize, instances, {
    intervalMs: recovery.sweepIntervalMs,
    graceMs: recovery.graceMs,
    inFlight,
    retention: options.retention,
    onSwept: (swept) => logger?.info?.({ ...swept }, 'the sweeper closed what a stopped instance left open and dropped what expired'),
    onKept: (kept) => logger?.info?.({ kept }, 'the retention kept partitions that hold what is still under way'),
    onError: (err) =>
      logger?.warn?.({ err: err instanceof Error ? { name: err.name } : typeof err }, 'the sweeper could not sweep: it tries again'),
  });
}
