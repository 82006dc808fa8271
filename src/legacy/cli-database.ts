// What the migration CLIs open: the service's database (DATABASE_URL, or the embedded cluster under
// the data folder) and the service's tool manifest, without applying any schema migration (a dry
// run must change nothing; the deploy path applies them itself).
import path from 'node:path';
import type { Sequelize } from 'sequelize';
import { readConfig } from '../config';
import type { ToolManifest } from '../core/tool-manifest';
import { createSequelize } from '../db/connect';
import { resolveDatabase } from '../db/database-url';
import { decideDemo } from '../demo/demo-mode';
import { SCOOP_TOOLS } from '../demo/scoop-tools';
import { ToolRegistry } from '../tools/tool-registry';

export interface CliDatabase {
  sequelize: Sequelize;
  /** The manifest `npm start` serves: the builtins, plus the demo tools only where the demo is active (src/demo/demo-mode.ts). */
  manifest: ToolManifest;
  close(): Promise<void>;
}

export async function openCliDatabase(): Promise<CliDatabase> {
  const config = readConfig();
  const db = await resolveDatabase({
    dataDir: path.join(config.dataDir, 'pgdata'),
    databaseName: 'toolgate',
    env: config.databaseUrl ? { DATABASE_URL: config.databaseUrl } : {},
  });
  // An operator's batch over every agent: no request is waiting, so no per-query time limit.
  const sequelize = createSequelize(db.url, { queryTimeoutMs: 0 });
  // By the service's rule, read only: a command that seeds nothing never starts the demo itself.
  const demo = await decideDemo(sequelize, { setting: config.demo, embedded: db.embedded, seeds: false }).catch(async (err: unknown) => {
    await sequelize.close().catch(() => undefined);
    await db.stop();
    throw err;
  });
  return {
    sequelize,
    manifest: new ToolRegistry(demo.active ? SCOOP_TOOLS : []).manifest,
    close: async () => {
      await sequelize.close().catch(() => undefined);
      await db.stop();
    },
  };
}
