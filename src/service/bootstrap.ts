// Opens what the service and the CLIs share: the database (DATABASE_URL, or the embedded
// PostgreSQL under the data folder), the schema brought up to date, a configured toolgate, and The
// Scoop's demo where it belongs (src/service/demo/demo-mode.ts).
import path from 'node:path';
import type { Sequelize } from 'sequelize';
import { ensureAdminToken } from './admin-token';
import type { ServiceConfig } from './config';
import { createSequelize } from '../db/connect';
import { resolveDatabase } from '../db/database-url';
import { seedUp } from '../db/migrate';
import { decideDemo, type DemoDecision } from './demo/demo-mode';
import { SCOOP_TOOLS } from './demo/scoop-tools';
import { createEmbeddings, createLanguageModel } from '../llm/select-model';
import type { ServiceLogger } from './logger';
import { senderAsGiven } from '../../middleware/sender-check';
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

/** The database as the service and the CLIs open it, with whether The Scoop's demo belongs on it. */
export interface OpenedDatabase {
  sequelize: Sequelize;
  embedded: boolean;
  demo: DemoDecision;
  close(): Promise<void>;
}

/**
 * Opens the database (DATABASE_URL, or the embedded cluster under the data folder) and decides the
 * demo there, applying nothing. `seeds`: the caller seeds the demo on a fresh embedded database
 * (`npm start`); a command that seeds nothing never starts the demo itself.
 */
export async function openDatabase(
  config: Pick<ServiceConfig, 'dataDir' | 'databaseUrl' | 'demo' | 'schema'>,
  options: { queryTimeoutMs: number; seeds: boolean; ownSignals?: boolean },
): Promise<OpenedDatabase> {
  const db = await resolveDatabase({
    dataDir: path.join(config.dataDir, 'pgdata'),
    databaseName: 'toolgate',
    env: config.databaseUrl ? { DATABASE_URL: config.databaseUrl } : {},
    ownSignals: options.ownSignals,
  });
  // With TOOLGATE_DB_SCHEMA, every connection searches toolgate's schema alone: the toolgate, the
  // demo's seeders and tools, and the CLIs all share this one pool.
  const sequelize = createSequelize(db.url, { queryTimeoutMs: options.queryTimeoutMs, schema: config.schema });
  const close = async () => {
    await sequelize.close().catch(() => undefined);
    await db.stop();
  };
  // Before any migration, which would make a fresh database look used.
  const demo = await decideDemo(sequelize, { setting: config.demo, embedded: db.embedded, seeds: options.seeds }).catch(
    async (err: unknown) => {
      await close();
      throw err;
    },
  );
  return { sequelize, embedded: db.embedded, demo, close };
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
