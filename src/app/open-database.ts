// Opens the database as the service and the CLIs share it (DATABASE_URL, or the embedded
// PostgreSQL under the data folder) and decides the demo there, applying nothing. Apart from
// bootstrap.ts, which builds a whole toolgate: the migration CLIs load only this (and what they
// run), not the gate, the agent loop, the MCP client or the local model, so that they start fast.
import path from 'node:path';
import type { Sequelize } from 'sequelize';
import type { ServiceConfig } from './config';
import { createSequelize } from '../db/connect';
import { resolveDatabase } from '../db/database-url';
import { decideDemo, type DemoDecision } from './demo/demo-mode';

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
