// The migrator: sequelize-cli's bookkeeping (SequelizeMeta rows named after the files), idempotent
// runs, and concurrent instances serialized by the advisory lock.
import { promises as fs, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createSequelize } from '../../src/db/connect';
import { migrateDown, migrateUp, pendingMigrations } from '../../src/db/migrate';
import { TOOLGATE_TABLES } from '../../src/db/toolgate-tables';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../support/database';

// The repository's migrations, which the migrator runs when given no folder.
const migrationFiles = readdirSync(path.join(__dirname, '..', '..', 'migrations'))
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .sort();

async function recorded(sequelize: Sequelize): Promise<string[]> {
  const rows = await sequelize.query<{ name: string }>('SELECT name FROM "SequelizeMeta" ORDER BY name', { type: QueryTypes.SELECT });
  return rows.map((r) => r.name);
}

/** The tables, a partitioned one's partitions aside (they are parts of it). */
async function userTables(sequelize: Sequelize): Promise<string[]> {
  const rows = await sequelize.query<{ t: string }>(
    `SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'SequelizeMeta'
        AND NOT (SELECT relispartition FROM pg_class WHERE oid = format('%I.%I', schemaname, tablename)::regclass) ORDER BY 1`,
    { type: QueryTypes.SELECT },
  );
  return rows.map((r) => r.t);
}

const databases: TestDatabase[] = [];
async function track(db: Promise<TestDatabase>): Promise<TestDatabase> {
  databases.push(await db);
  return databases[databases.length - 1]!;
}
afterAll(async () => {
  await Promise.all(databases.map((db) => db.drop()));
});

it('has migrations to test', () => {
  expect(migrationFiles.length).toBeGreaterThan(0);
});

describe('a database cloned from the migrated template', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await track(createTestDatabase());
  });

  it('records every migration in SequelizeMeta under its file name, extension included', async () => {
    expect(await recorded(db.sequelize)).toEqual(migrationFiles);
  });

  it('has nothing pending, and a second migrateUp applies nothing', async () => {
    expect(await pendingMigrations(db.sequelize)).toEqual([]);
    expect(await migrateUp(db.sequelize)).toEqual([]);
    expect(await recorded(db.sequelize)).toEqual(migrationFiles);
  });
});

describe('an empty database', () => {
  it('gets every migration, in file order, and they all revert and reapply', async () => {
    const db = await track(createEmptyDatabase());
    expect(await pendingMigrations(db.sequelize)).toEqual(migrationFiles);
    expect(await migrateUp(db.sequelize)).toEqual(migrationFiles);
    expect(await recorded(db.sequelize)).toEqual(migrationFiles);
    const tables = await userTables(db.sequelize);
    expect(tables.length).toBeGreaterThan(0);

    expect(await migrateDown(db.sequelize)).toEqual(migrationFiles.slice(-1));
    expect(await pendingMigrations(db.sequelize)).toEqual(migrationFiles.slice(-1));

    expect(await migrateDown(db.sequelize, { to: 0 })).toEqual(migrationFiles.slice(0, -1).reverse());
    expect(await recorded(db.sequelize)).toEqual([]);
    expect(await userTables(db.sequelize)).toEqual([]);

    expect(await migrateUp(db.sequelize)).toEqual(migrationFiles);
    expect(await userTables(db.sequelize)).toEqual(tables);
  });

  it('ends with every migration applied exactly once when several migrators run at once', async () => {
    const db = await track(createEmptyDatabase());
    const instances = [db.sequelize, createSequelize(db.url), createSequelize(db.url), createSequelize(db.url)];
    try {
      const results = await Promise.all(instances.map((s) => migrateUp(s)));
      // The lock serializes whole runs: one applies everything, the others find nothing to do.
      expect(results.flat().sort()).toEqual(migrationFiles);
      expect(results.filter((r) => r.length > 0)).toHaveLength(1);
    } finally {
      await Promise.all(instances.slice(1).map((s) => s.close()));
    }
    expect(await recorded(db.sequelize)).toEqual(migrationFiles);
  });

  it('loses, as each migration is reverted in turn, exactly the tables TOOLGATE_TABLES says it makes', async () => {
    const db = await track(createEmptyDatabase());
    await migrateUp(db.sequelize);
    const made: Record<string, string[]> = {};
    let before = await userTables(db.sequelize);
    for (let left = migrationFiles.length; left > 0; left--) {
      const [reverted] = await migrateDown(db.sequelize);
      const after = await userTables(db.sequelize);
      const gone = before.filter((t) => !after.includes(t));
      if (gone.length > 0) made[reverted!.replace(/\.ts$/, '')] = gone;
      before = after;
    }
    const listed: Record<string, string[]> = {};
    for (const t of TOOLGATE_TABLES) (listed[t.migration] ??= []).push(t.name);
    for (const names of Object.values(listed)) names.sort();
    expect(made).toEqual(listed);
  });

  it('works with a pool of one connection (the lock has its own)', async () => {
    const db = await track(createEmptyDatabase({ pool: { max: 1 } }));
    expect(await migrateUp(db.sequelize)).toEqual(migrationFiles);
  });

  it('counts rows spelt .js (written by the compiled build) as the .ts files, and reverts them', async () => {
    const db = await track(createEmptyDatabase());
    await migrateUp(db.sequelize);
    await db.sequelize.query(`UPDATE "SequelizeMeta" SET name = replace(name, '.ts', '.js')`);
    expect(await pendingMigrations(db.sequelize)).toEqual([]);
    expect(await migrateDown(db.sequelize)).toEqual(migrationFiles.slice(-1));
    expect(await recorded(db.sequelize)).toEqual(migrationFiles.slice(0, -1).map((f) => f.replace(/\.ts$/, '.js')));
    await migrateUp(db.sequelize);
    expect(await recorded(db.sequelize)).toContain(migrationFiles[migrationFiles.length - 1]);
  });
});

describe('the advisory lock', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-migrations-'));
    // Slow enough that unserialized runs would overlap: both would CREATE TABLE and log the row.
    await fs.writeFile(
      path.join(folder, '00000000000001-slow-probe.ts'),
      [
        'export async function up(queryInterface: any): Promise<void> {',
        '  await queryInterface.sequelize.query("CREATE TABLE slow_probe (at timestamptz NOT NULL DEFAULT clock_timestamp())");',
        '  await queryInterface.sequelize.query("SELECT pg_sleep(0.3)");',
        '}',
        'export async function down(queryInterface: any): Promise<void> {',
        '  await queryInterface.sequelize.query("DROP TABLE slow_probe");',
        '}',
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await fs.rm(folder, { recursive: true, force: true });
  });

  it('serializes concurrent runs of a slow migration', async () => {
    const db = await track(createEmptyDatabase());
    const other = createSequelize(db.url);
    try {
      const results = await Promise.all([migrateUp(db.sequelize, { folder }), migrateUp(other, { folder })]);
      expect(results.flat()).toEqual(['00000000000001-slow-probe.ts']);
    } finally {
      await other.close();
    }
    expect(await recorded(db.sequelize)).toEqual(['00000000000001-slow-probe.ts']);
  });
});
