// Opens what the service and the CLIs share: the database (DATABASE_URL, or the embedded
// PostgreSQL under the data folder), the schema brought up to date, a configured toolgate, and The
// Scoop's demo where it belongs (src/app/demo/demo-mode.ts).
import type { Sequelize } from 'sequelize';
import { ensureAdminToken } from './admin-token';
import type { ServiceConfig } from './config';
import { seedUp } from '../db/migrate';
import type { DemoDecision } from './demo/demo-mode';
import { SCOOP_TOOLS } from './demo/scoop-tools';
import { createEmbeddings, createLanguageModel } from '../llm/select-model';
import type { ServiceLogger } from './logger';
import { senderAsGiven } from '../../middleware/sender-check';
import { openDatabase } from './open-database';
import type { SyncReport } from '../services/system-toolkits';
import { createToolgate, type Toolgate, type ToolgateOptions } from '../toolgate';

export interface Opened {
  sequelize: Sequelize;
  toolgate: Toolgate;
  embedded: boolean;
  /** The admin token in force (configured, or generated into adminTokenFile): the dashboard signs in with it. */
  adminToken: string;
  adminTokenFile: string | null;
  /** The system toolkits' sync this opening ran (All Tools, Default Tools). */
  sync: SyncReport;
  /** Whether the demo is active here and why, and the demo seeders this opening ran. */
  demo: DemoDecision & { seeded: string[] };
  close(): Promise<void>;
}

/** `ownSignals`: the caller stops everything itself on SIGTERM and SIGINT (the service, which drains first). */
export async function openService(config: ServiceConfig, logger: ServiceLogger, options: { ownSignals?: boolean } = {}): Promise<Opened> {
  const database = await openDatabase(config, { queryTimeoutMs: config.dbQueryTimeoutMs, seeds: true, ownSignals: options.ownSignals });
  const { sequelize, demo } = database;
  let toolgate: Toolgate | undefined;
  let embeddingSweep: NodeJS.Timeout | undefined;
  const close = async () => {
    clearInterval(embeddingSweep);
    // The listener first, so it does not take the pool's end for a lost connection.
    await toolgate?.close().catch(() => undefined);
    await database.close();
  };
  try {
    let adminToken = config.adminToken;
    let adminTokenFile: string | null = null;
    if (!adminToken) {
      const made = await ensureAdminToken(config.dataDir);
      adminToken = made.token;
      adminTokenFile = made.file;
    }
    toolgate = createToolgate({
      sequelize,
      tools: demo.active ? SCOOP_TOOLS : [],
      adminToken,
      schedulerToken: config.schedulerToken,
      clientTokens: config.clientTokens,
      // The legacy open mode is the service's own choice while no client token is set (server.ts logs it).
      clientRoutes: config.clientRoutes,
      ...(config.clientRoutes === 'open' ? { allowedHosts: config.allowedHosts } : {}),
      metricsToken: config.metricsToken,
      bodyLimit: config.bodyLimit,
      rateLimit: config.rateLimit,
      policyCache: config.policyCache,
      tracing: config.tracing,
      // Senders as given while TOOLGATE_AUTHSERV_ID is unset: the legacy behaviour, the service's own choice (server.ts logs it).
      ...(config.authservId ? { authservId: config.authservId } : { senderCheck: senderAsGiven }),
      logger,
      model: createLanguageModel(process.env),
      embeddings: createEmbeddings(process.env),
      agentRuns: config.agentRuns,
      approvals: { expiryMs: config.approvalExpiryMs },
      retention: {
        keep: config.retention.keepDays === null ? 'off' : `${config.retention.keepDays}d`,
        partitions: config.retention.partitions,
      },
      adoptLegacyTables: config.adoptLegacyTables,
      ...(config.schema ? { schema: config.schema } : {}),
      ...(config.mcp === undefined ? {} : { mcp: config.mcp as ToolgateOptions['mcp'] }),
    });
    const applied = await toolgate.migrate();
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
    // Chunks with no vector of the configured model (uploads while the provider was down, or a
    // changed model or size) are embedded in the background, now and at every sweep.
    const tg = toolgate;
    if (tg.reembed()) embeddingSweep = setInterval(() => tg.reembed(), config.embeddingSweepMs).unref();
    // The system toolkits before the demo, so their ids come first (All Tools 1, Default Tools 2), as
    // the README's scenario names them.
    const sync = await toolgate.syncSystemToolkits();
    // Each seeder runs once per database: what an operator changed or deleted since stays so.
    const seeded = demo.active ? await seedUp(sequelize) : [];
    return { sequelize, toolgate, embedded: database.embedded, adminToken, adminTokenFile, sync, demo: { ...demo, seeded }, close };
  } catch (err) {
    await close();
    throw err;
  }
}
