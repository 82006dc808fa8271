// Jest globalSetup (jest.config.js), run once in jest's parent process before any test file.
//
// The server: DATABASE_URL when set (only databases named toolgate_*_<run id>… are created and
// dropped there), else a throwaway embedded PostgreSQL in a temporary folder on a free port.
// On it, a template database migrated once; each test file clones it (test/support/database.ts).
// Test workers learn where through these variables:
//   TOOLGATE_TEST_ADMIN_URL    URL of a database to issue CREATE/DROP DATABASE from
//   TOOLGATE_TEST_TEMPLATE_DB  the migrated template
//   TOOLGATE_TEST_DB_PREFIX    prefix of every per-file database of this run (teardown drops them)
// TOOLGATE_TEST_PG_LOG=1 prints the embedded server's output.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSequelize } from '../../src/db/connect';
import { ensureDatabase, withDatabase } from '../../src/db/database-url';
import { startEmbeddedPostgres } from '../../src/db/embedded';
import { migrateUp } from '../../src/db/migrate';
import { dropRunDatabases, type TestRun } from './database';

/** What globalTeardown needs; it runs in this same process. */
export const TEST_RUN = Symbol.for('toolgate.testRun');
type WithRun = typeof globalThis & { [TEST_RUN]?: TestRun };

export default async function globalSetup(): Promise<void> {
  const runId = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const run: TestRun = {
    adminUrl: process.env.DATABASE_URL?.trim() ?? '',
    templateDb: `toolgate_tpl_${runId}`,
    dbPrefix: `toolgate_t_${runId}_`,
  };
  (globalThis as WithRun)[TEST_RUN] = run;
  try {
    if (!run.adminUrl) {
      const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-pg-'));
      run.tmpDir = tmp;
      await fs.chmod(tmp, 0o755); // the server runs as `postgres` when we are root
      const started = Date.now();
      const server = await startEmbeddedPostgres({
        dataDir: path.join(tmp, 'data'),
        persistent: false,
        log: process.env.TOOLGATE_TEST_PG_LOG ? (line) => process.stderr.write(`[pg] ${line}\n`) : undefined,
      });
      run.server = server;
      run.adminUrl = server.url;
      if (process.env.TOOLGATE_TEST_PG_LOG) process.stderr.write(`[pg] embedded server up in ${Date.now() - started} ms\n`);
    }

    await ensureDatabase(run.adminUrl, run.templateDb);
    const sequelize = createSequelize(withDatabase(run.adminUrl, run.templateDb));
    try {
      await migrateUp(sequelize);
    } finally {
      await sequelize.close();
    }
  } catch (err) {
    await dropRunDatabases(run).catch(() => undefined);
    await run.server?.stop().catch(() => undefined);
    if (run.tmpDir) await fs.rm(run.tmpDir, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  }

  process.env.TOOLGATE_TEST_ADMIN_URL = run.adminUrl;
  process.env.TOOLGATE_TEST_TEMPLATE_DB = run.templateDb;
  process.env.TOOLGATE_TEST_DB_PREFIX = run.dbPrefix;
}
