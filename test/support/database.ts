// One database per test file, cloned from the template that globalSetup migrated:
//
//   let db: TestDatabase;
//   beforeAll(async () => { db = await createTestDatabase(); });
//   afterAll(() => db.drop());
import { randomBytes } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { createSequelize, type CreateSequelizeOptions } from '../../src/db/connect';
import { withClient, withDatabase } from '../../src/db/database-url';
import { quoteIdent } from '../../src/db/quote-ident';

export interface TestDatabase {
  sequelize: Sequelize;
  url: string;
  name: string;
  /** Closes sequelize and drops the database. */
  drop(): Promise<void>;
}

/** A fresh database with every migration applied (a copy of the run's template). */
export function createTestDatabase(opts: CreateSequelizeOptions = {}): Promise<TestDatabase> {
  return create(`TEMPLATE ${quoteIdent(setting('TOOLGATE_TEST_TEMPLATE_DB'))}`, opts);
}

/** A fresh database with no tables at all (no SequelizeMeta either), for migrations from scratch. */
export function createEmptyDatabase(opts: CreateSequelizeOptions = {}): Promise<TestDatabase> {
  return create('TEMPLATE template0', opts);
}

async function create(template: string, opts: CreateSequelizeOptions): Promise<TestDatabase> {
  const adminUrl = setting('TOOLGATE_TEST_ADMIN_URL');
  const name = `${setting('TOOLGATE_TEST_DB_PREFIX')}${process.env.JEST_WORKER_ID ?? '0'}_${randomBytes(4).toString('hex')}`;
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${quoteIdent(name)} ${template}`));
  const url = withDatabase(adminUrl, name);
  const sequelize = createSequelize(url, opts);
  let dropped: Promise<void> | undefined;
  return {
    sequelize,
    url,
    name,
    drop: () =>
      (dropped ??= (async () => {
        await sequelize.close().catch(() => undefined);
        await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
      })()),
  };
}

function setting(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(
      `${name} is not set: run the tests through jest, whose globalSetup (test/support/global-setup.ts) prepares the database`,
    );
  return value;
}

/** What globalSetup prepared for one jest run. */
export interface TestRun {
  adminUrl: string;
  templateDb: string;
  dbPrefix: string;
  server?: { stop(): Promise<void> };
  tmpDir?: string;
}

/** Drops the run's template and every per-file database left behind (e.g. by a failed afterAll). */
export async function dropRunDatabases(run: TestRun): Promise<void> {
  if (!run.adminUrl) return;
  await withClient(run.adminUrl, async (c) => {
    const { rows } = await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname = $1 OR starts_with(datname, $2)`, [
      run.templateDb,
      run.dbPrefix,
    ]);
    for (const { datname } of rows) await c.query(`DROP DATABASE IF EXISTS ${quoteIdent(datname)} WITH (FORCE)`);
  });
}
