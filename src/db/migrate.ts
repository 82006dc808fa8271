// Schema migrations with umzug 3, in sequelize-cli's format and bookkeeping, so that the service
// and `npx sequelize-cli db:migrate` can take turns on the same database.
//
// - Files: migrations/*.ts (migrations/*.js when this module runs compiled from dist/), each
//   exporting up(queryInterface, Sequelize) and down(queryInterface, Sequelize), where Sequelize is
//   the `sequelize` module's exports (DataTypes, Op, …) as sequelize-cli passes it.
// - Bookkeeping: table "SequelizeMeta", one row per applied migration, column `name` = the file
//   name with its extension, e.g. `20261130000001-create-agents.ts` (umzug's SequelizeStorage, the
//   same table and rows sequelize-cli writes). Rows always name the source file (`.ts`), also when
//   the compiled `x.js` ran from dist, and a row spelt `x.js` (or .cjs, …) counts as `x.ts` too: the
//   build, this migrator under tsx and sequelize-cli (which reads migrations/*.ts through tsx) all
//   agree on what is applied.
// - Several instances starting at once: every command runs under a PostgreSQL advisory lock held by
//   a dedicated connection (not one from Sequelize's pool, which could hand lock and unlock to
//   different sessions, or run out while migrations need it). A toolgate in a schema of its own
//   (src/db/schema.ts) has a lock of its own, so it never waits for another's.
// - In a schema of its own, the schema is made before the first migration, and every toolgate
//   function in it has its search_path pinned after each run (src/db/schema-setup.ts).
import path from 'node:path';
import { QueryTypes, type QueryInterface, type Sequelize } from 'sequelize';
import { SequelizeStorage, Umzug, type MigrateDownOptions, type UmzugStorage } from 'umzug';
import SequelizeModule = require('sequelize');
import { quoteIdent } from './quote-ident';
import { dedicatedClient } from './dedicated-client';
import { refuseHostTables } from './host-tables';
import { lockKeySql, schemaOf } from './schema';
import { createSchema, pinFunctions } from './schema-setup';
import { tablesMadeBy } from './toolgate-tables';

/** pg_advisory_lock key for "toolgate migrations" (advisory locks are per database). */
export const MIGRATION_LOCK_KEY = '7415926535897';
/** That key, or its schema's, as the connection's toolgate.schema setting says. */
const MIGRATION_LOCK = lockKeySql('toolgate migrations', '$1');

const DEFAULT_MIGRATIONS_FOLDER = path.join(__dirname, '..', '..', 'migrations');
export const DEFAULT_SEEDERS_FOLDER = path.join(__dirname, '..', '..', 'seeders');

export interface MigratorOptions {
  /** Default: <repo>/migrations (from src/db or dist/src/db). */
  folder?: string;
  /** umzug's logger; default: silent. */
  logger?: ConstructorParameters<typeof Umzug<QueryInterface>>[0]['logger'];
}

export interface MigrateUpOptions extends MigratorOptions {
  /**
   * Adopt the legacy application's tables (agents, tool_calls, documents, tasks) where they exist.
   * Without it, a database that holds one of them, or any other table of a name toolgate's pending
   * migrations would create, is refused before anything changes (HostTablesError).
   */
  adoptLegacyTables?: boolean;
}

type MigrationFn = (queryInterface: QueryInterface, sequelize: typeof SequelizeModule) => Promise<unknown>;
interface MigrationModule {
  up?: MigrationFn;
  down?: MigrationFn;
  default?: { up?: MigrationFn; down?: MigrationFn };
}

export function migrator(sequelize: Sequelize, opts: MigratorOptions = {}): Umzug<QueryInterface> {
  return scripts(sequelize, opts.folder ?? DEFAULT_MIGRATIONS_FOLDER, 'SequelizeMeta', opts.logger);
}

/**
 * The seeders, each run once: recorded in "SequelizeData", the table sequelize-cli keeps with
 * `seederStorage: "sequelize"` (src/db/sequelize-cli.config.cjs), so that `db:seed:all` and the
 * service agree on what has run and neither runs a seeder again.
 */
export function seeder(sequelize: Sequelize, opts: MigratorOptions = {}): Umzug<QueryInterface> {
  return scripts(sequelize, opts.folder ?? DEFAULT_SEEDERS_FOLDER, 'SequelizeData', opts.logger);
}

function scripts(sequelize: Sequelize, folder: string, modelName: string, logger: MigratorOptions['logger']): Umzug<QueryInterface> {
  // .ts under tsx / ts-jest, .js when compiled.
  const ext = path.extname(__filename) === '.ts' ? '.ts' : '.js';
  return new Umzug<QueryInterface>({
    migrations: {
      glob: [`*${ext}`, { cwd: folder, ignore: ['*.d.ts'] }],
      resolve: ({ name, path: file, context }) => ({
        name,
        path: file,
        up: async () => method(file!, 'up')(context, SequelizeModule),
        down: async () => method(file!, 'down')(context, SequelizeModule),
      }),
    },
    context: sequelize.getQueryInterface(),
    storage: new ExtensionAgnosticStorage(sequelize, new SequelizeStorage({ sequelize, modelName }), modelName, ext),
    logger,
  });
}

/** Runs the seeders that have not run yet on this database; returns their names, in order. */
export async function seedUp(sequelize: Sequelize, opts: MigratorOptions = {}): Promise<string[]> {
  const umzug = seeder(sequelize, opts);
  const ran = await withMigrationLock(sequelize, () => umzug.up());
  return ran.map((m) => m.name);
}

/**
 * Applies every pending migration; returns the names applied, in order. Before the first, it makes
 * sure that none would create or adopt a table toolgate did not make, unless asked to adopt the
 * legacy application's (refuseHostTables): a host's own `tasks` is never altered behind its back.
 */
export async function migrateUp(sequelize: Sequelize, opts: MigrateUpOptions = {}): Promise<string[]> {
  const { adoptLegacyTables = false, ...migratorOptions } = opts;
  const applied = await withUnboundedQueries(sequelize, (own) =>
    withMigrationLock(own, async () => {
      const schema = schemaOf(own);
      if (schema !== null) await createSchema(own, schema);
      const umzug = migrator(own, migratorOptions);
      // Another folder's migrations (a test's probe) make none of toolgate's tables.
      if (opts.folder === undefined) {
        const pending = await umzug.pending();
        await refuseHostTables(own, tablesMadeBy(pending.map((m) => m.name)), { adoptLegacyTables });
      }
      try {
        return await umzug.up();
      } finally {
        // Also after a failed run: the migrations that committed made their functions.
        if (schema !== null) await pinFunctions(own, schema);
      }
    }),
  );
  return applied.map((m) => m.name);
}

/** Reverts the last migration (default), `step` of them, or all down `to` a name (0: all). */
export async function migrateDown(sequelize: Sequelize, opts: MigrateDownOptions & MigratorOptions = { step: 1 }): Promise<string[]> {
  const { folder, logger, ...down } = opts;
  const reverted = await withUnboundedQueries(sequelize, (own) =>
    withMigrationLock(own, async () => {
      const schema = schemaOf(own);
      try {
        return await migrator(own, { folder, logger }).down(Object.keys(down).length ? (down as MigrateDownOptions) : { step: 1 });
      } finally {
        // A down() may put back an older function with CREATE OR REPLACE, which forgets its setting.
        if (schema !== null) await pinFunctions(own, schema);
      }
    }),
  );
  return reverted.map((m) => m.name);
}

const QUERY_TIMEOUTS = ['statement_timeout', 'query_timeout'];

/**
 * Runs fn with a Sequelize on the same database whose queries have no time limit: a migration may
 * rewrite a large table, which the request path's timeouts (createSequelize's queryTimeoutMs)
 * would cut short. A Sequelize with no such limits is used as it is.
 */
async function withUnboundedQueries<T>(sequelize: Sequelize, fn: (own: Sequelize) => Promise<T>): Promise<T> {
  const c = sequelize.config as typeof sequelize.config & { dialectOptions?: Record<string, unknown> };
  const dialectOptions = c.dialectOptions ?? {};
  if (!QUERY_TIMEOUTS.some((k) => dialectOptions[k] !== undefined)) return fn(sequelize);
  const own = new SequelizeModule.Sequelize(c.database, c.username, c.password ?? undefined, {
    dialect: 'postgres',
    dialectModule: (sequelize as unknown as { options: { dialectModule?: object } }).options.dialectModule,
    host: c.host,
    port: c.port ? Number(c.port) : undefined,
    logging: false,
    pool: { max: 2, min: 0 },
    dialectOptions: Object.fromEntries(Object.entries(dialectOptions).filter(([k]) => !QUERY_TIMEOUTS.includes(k))),
  });
  try {
    return await fn(own);
  } finally {
    await own.close();
  }
}

/**
 * Names of the migration files not applied yet, in order. It only reads: a database without
 * SequelizeMeta has every migration pending, and keeps having no SequelizeMeta (a /readyz on a
 * database whose schema was undone must not start making it again).
 */
export async function pendingMigrations(sequelize: Sequelize, opts: MigratorOptions = {}): Promise<string[]> {
  const pending = await migrator(sequelize, opts).pending();
  return pending.map((m) => m.name);
}

/** Runs fn while holding the migration advisory lock on sequelize's database. */
export async function withMigrationLock<T>(sequelize: Sequelize, fn: () => Promise<T>): Promise<T> {
  const client = dedicatedClient(sequelize);
  client.on('error', () => undefined); // losing the connection releases the lock; fn's own queries report it
  await client.connect();
  try {
    await client.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`, [MIGRATION_LOCK_KEY]);
    try {
      return await fn();
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`, [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The names a bookkeeping table holds, in order; none when there is no such table. */
async function storedNames(sequelize: Sequelize, table: string): Promise<string[]> {
  const quoted = quoteIdent(table);
  const [found] = await sequelize.query<{ present: boolean }>('SELECT to_regclass(:quoted) IS NOT NULL AS present', {
    replacements: { quoted },
    type: QueryTypes.SELECT,
  });
  if (!found?.present) return [];
  const rows = await sequelize.query<{ name: string }>(`SELECT name FROM ${quoted} ORDER BY name`, { type: QueryTypes.SELECT });
  return rows.map((r) => r.name);
}

function method(file: string, which: 'up' | 'down'): MigrationFn {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(file) as MigrationModule;
  const fn = mod[which] ?? mod.default?.[which];
  if (typeof fn !== 'function') throw new Error(`${path.basename(file)} exports no ${which}() function`);
  return fn;
}

const SCRIPT_EXT = /\.(ts|js|cts|cjs|mts|mjs)$/;

/**
 * SequelizeStorage with one spelling per migration: rows are written as `<stem>.ts` (the source
 * file's name, as sequelize-cli writes it) and any stored `<stem>.js|.cjs|…` is reported under the
 * running file's name `<stem><ext>`. Unlogging removes every spelling stored for that migration.
 * Reading never creates the table (SequelizeStorage's own read does): only logging a migration does.
 */
class ExtensionAgnosticStorage implements UmzugStorage<QueryInterface> {
  private readonly spellings = new Map<string, Set<string>>();

  constructor(
    private readonly sequelize: Sequelize,
    private readonly inner: SequelizeStorage,
    private readonly table: string,
    private readonly ext: string,
  ) {}

  async executed(): Promise<string[]> {
    this.spellings.clear();
    for (const stored of await storedNames(this.sequelize, this.table)) {
      const name = stored.replace(SCRIPT_EXT, this.ext);
      if (!this.spellings.has(name)) this.spellings.set(name, new Set());
      this.spellings.get(name)!.add(stored);
    }
    return [...this.spellings.keys()];
  }

  async logMigration({ name }: { name: string }): Promise<void> {
    await this.inner.logMigration({ name: name.replace(SCRIPT_EXT, '.ts') });
  }

  async unlogMigration({ name }: { name: string }): Promise<void> {
    await this.executed();
    for (const stored of this.spellings.get(name) ?? [name]) await this.inner.unlogMigration({ name: stored });
  }
}
