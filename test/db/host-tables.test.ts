// Issue 29, item 1: a host that embeds toolgate in its own product database keeps its own tables as
// they are. A table of one of toolgate's names that toolgate did not create (here the host's
// `tasks`, whose `assignee` is nullable in one product and NOT NULL in another) is never altered:
// tg.migrate() refuses before changing anything, naming the table and what to do instead, and a
// pg_dump of the database afterwards is the one taken before, byte for byte.
import type { Sequelize } from 'sequelize';
import { createSequelize } from '../../src/db/connect';
import { withClient, withDatabase } from '../../src/db/database-url';
import { createToolgate } from '../../src/toolgate';
import { startDebianCluster, type DebianCluster } from '../legacy/support/debian-postgres';

jest.setTimeout(60_000);

let cluster: DebianCluster;
const opened: Sequelize[] = [];

beforeAll(async () => {
  cluster = await startDebianCluster();
});

afterAll(async () => {
  await Promise.all(opened.map((s) => s.close().catch(() => undefined)));
  await cluster?.stop();
});

/** A product database of the host's: its own tasks table (assignee as given), with rows. */
async function productDatabase(name: string, assignee: string): Promise<{ url: string; sequelize: Sequelize }> {
  await withClient(cluster.url, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = withDatabase(cluster.url, name);
  const sequelize = createSequelize(url);
  opened.push(sequelize);
  await sequelize.query(`
    CREATE TABLE tasks (
      id SERIAL PRIMARY KEY,
      title TEXT NOT NULL,
      assignee ${assignee},
      done BOOLEAN NOT NULL DEFAULT false
    );
    CREATE INDEX tasks_assignee_idx ON tasks (assignee);
    INSERT INTO tasks (title, assignee) VALUES ('Restock pistachio', 'mara'), ('Fix the freezer', 'sam');
  `);
  return { url, sequelize };
}

/** What tg.migrate() threw, or null. */
async function migrateError(sequelize: Sequelize, schema?: string): Promise<(Error & { code?: string; tables?: string[] }) | null> {
  const tg = createToolgate({ sequelize, adminToken: 'host-admin-token-0123456789', ...(schema ? { schema } : {}) });
  try {
    await tg.migrate();
    return null;
  } catch (err) {
    return err as Error;
  } finally {
    await tg.close();
  }
}

describe('when a host database has a tasks table of its own', () => {
  test.each([
    ['nullable', 'product_nullable', 'TEXT'],
    ['NOT NULL', 'product_not_null', 'TEXT NOT NULL'],
  ])(
    'with assignee %s, then tg.migrate() refuses naming tasks and the options, and a pg_dump of the table and of the database is unchanged',
    async (_case, name, assignee) => {
      const { url, sequelize } = await productDatabase(name, assignee);
      const table = () => cluster.dump(url, ['--table', 'public.tasks']);
      const [tableBefore, databaseBefore] = [await table(), await cluster.dump(url)];
      expect(tableBefore).toContain('CREATE TABLE public.tasks');

      const error = await migrateError(sequelize);

      expect(error).toMatchObject({ name: 'ToolgateConfigError', code: 'ERR_TOOLGATE_HOST_TABLES', tables: ['tasks'] });
      expect(error?.message).toContain('"tasks"');
      expect(error?.message).toContain('adoptLegacyTables: true');
      expect(error?.message).toContain('--adopt-legacy-tables');
      expect(error?.message).toContain("schema: 'toolgate'");
      expect(await table()).toBe(tableBefore);
      // Nothing of toolgate's either: no SequelizeMeta, no agents, no function, no trigger.
      expect(await cluster.dump(url)).toBe(databaseBefore);
    },
  );
});

describe('when toolgate is given a schema of its own on that database', () => {
  test.each([
    ['nullable', 'product_schema_nullable', 'TEXT'],
    ['NOT NULL', 'product_schema_not_null', 'TEXT NOT NULL'],
  ])(
    "with assignee %s, then tg.migrate() makes its own tasks there, and a pg_dump of the host's tasks is unchanged",
    async (_case, name, assignee) => {
      const { url, sequelize } = await productDatabase(name, assignee);
      const table = () => cluster.dump(url, ['--table', 'public.tasks']);
      const publicSchema = () => cluster.dump(url, ['--schema', 'public']);
      const [tableBefore, publicBefore] = [await table(), await publicSchema()];

      expect(await migrateError(sequelize, 'toolgate')).toBeNull();

      expect(await table()).toBe(tableBefore);
      // The whole public schema too: nothing of toolgate's is in it.
      expect(await publicSchema()).toBe(publicBefore);
      expect(await cluster.dump(url, ['--schema', 'toolgate'])).toContain('CREATE TABLE toolgate.tasks');
    },
  );
});
