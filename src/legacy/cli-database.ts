// What the migration CLIs open: the service's database (DATABASE_URL, or the embedded cluster under
// the data folder) and the service's tool manifest, without applying any schema migration (a dry
// run must change nothing; the deploy path applies them itself).
import path from 'node:path';
import type { Sequelize } from 'sequelize';
import { readConfig } from '../config';
import type { ToolManifest } from '../core/tool-manifest';
import { createSequelize } from '../db/connect';
import { resolveDatabase } from '../db/database-url';
import { SCOOP_TOOLS } from '../demo/scoop-tools';
import { ToolRegistry } from '../tools/tool-registry';

export interface CliDatabase {
  sequelize: Sequelize;
  /** The manifest `npm start` serves: the builtins, plus the demo tools while TOOLGATE_DEMO is on. */
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
  return {
    sequelize,
    manifest: new ToolRegistry(config.demo ? SCOOP_TOOLS : []).manifest,
    close: async () => {
      await sequelize.close().catch(() => undefined);
      await db.stop();
    },
  };
}
