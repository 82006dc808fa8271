// Issue 29, item 1: createToolgate({ schema }) keeps every table, function, trigger and bookkeeping
// table of toolgate's in a schema of its own, beside a host database's own tables of the same
// names, and leaves the host's public schema as it was. A second toolgate in another schema of the
// same database is not disturbed: neither its migrations' lock nor its policy notifications.
import { once } from 'node:events';
import express from 'express';
import request from 'supertest';
import { QueryTypes, type Sequelize } from 'sequelize';
import { z } from 'zod';
import { senderAsGiven } from '../../middleware/sender-check';
import { createSequelize } from '../../src/db/connect';
import { withClient } from '../../src/db/database-url';
import { migrateDown, withMigrationLock } from '../../src/db/migrate';
import { TOOLGATE_TABLES } from '../../src/db/toolgate-tables';
import type { Invalidation } from '../../src/run/listened-policies';
import { defineTool } from '../../src/index';
import { createToolgate, internalsOf, type Toolgate } from '../../src/toolgate';
import { createEmptyDatabase, type TestDatabase } from '../support/database';

const ADMIN = 'schema-admin-token-0123456789';
const CLIENT = 'schema-client-token-0123456789';

let db: TestDatabase;
let host: Sequelize;
let tg: Toolgate;
let hostBefore: Record<string, unknown>;
const contexts: Sequelize[] = [];

const rows = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  host.query<T>(sql, { type: QueryTypes.SELECT, replacements });

/** The host's tables in public, each with its columns and rows: what toolgate must leave as it was. */
async function publicSchema(): Promise<Record<string, unknown>> {
  const tables = await rows<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`);
  const out: Record<string, unknown> = {};
  for (const { t } of tables) {
    out[t] = {
      columns: await rows(
        `SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public' AND table_name = :t ORDER BY ordinal_position`,
        { t },
      ),
      indexes: await rows(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = :t ORDER BY 1`, { t }),
      constraints: await rows(
        `SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = ('public.' || quote_ident(:t))::regclass ORDER BY 1`,
        { t },
      ),
      triggers: await rows(`SELECT tgname FROM pg_trigger WHERE tgrelid = ('public.' || quote_ident(:t))::regclass ORDER BY 1`, { t }),
      rows: await rows(`SELECT * FROM public.${t} ORDER BY 1`),
    };
  }
  out.functions = await rows(`SELECT proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace ORDER BY 1`);
  return out;
}

const lookupOrder = defineTool({
  id: 'lookup_order',
  display_name: 'Look up order',
  summary: 'Finds an order.',
  input: z.object({ order_id: z.string() }),
  execute: ({ order_id }, context) => {
    contexts.push(context.sequelize);
    return { order_id, status: 'delivered' };
  },
});

function toolgateIn(schema: string): Toolgate {
  return createToolgate({
    sequelize: host,
    schema,
    tools: [lookupOrder],
    adminToken: ADMIN,
    clientTokens: [CLIENT],
    senderCheck: senderAsGiven,
  });
}

beforeAll(async () => {
  db = await createEmptyDatabase();
  host = db.sequelize;
  // The host's product: tables of its own, two of them named as toolgate's.
  await host.query(`
    CREATE TABLE agents (id SERIAL PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL);
    CREATE TABLE tasks (id SERIAL PRIMARY KEY, title TEXT NOT NULL, assignee TEXT);
    INSERT INTO agents (name, email) VALUES ('Mara', 'mara@thescoop.com');
    INSERT INTO tasks (title, assignee) VALUES ('Restock pistachio', 'mara');
  `);
  hostBefore = await publicSchema();
  tg = toolgateIn('toolgate');
  await tg.migrate();
  await tg.syncSystemToolkits();
});

afterAll(async () => {
  await tg?.close();
  await db.drop();
});

// toolgate's tables in its schema, a partitioned one's partitions aside (they are parts of it).
const TABLES_IN_SCHEMA = `SELECT tablename AS t FROM pg_tables
  WHERE schemaname = 'toolgate' AND NOT (SELECT relispartition FROM pg_class WHERE oid = format('%I.%I', schemaname, tablename)::regclass) ORDER BY 1`;

describe('when tg.migrate() runs with schema: "toolgate" on a database with tables of its own', () => {
  test('then every table of toolgate, and its SequelizeMeta, is in that schema, and public is as it was', async () => {
    const inSchema = await rows<{ t: string }>(TABLES_IN_SCHEMA);
    expect(inSchema.map((r) => r.t)).toEqual([...TOOLGATE_TABLES.map((t) => t.name), 'SequelizeMeta'].sort());
    expect(await publicSchema()).toEqual(hostBefore);
  });

  test("then every function and trigger of toolgate's is in the schema, and each function that reads a table searches the schema alone", async () => {
    const functions = await rows<{ name: string; schema: string; config: string[] | null }>(
      `SELECT p.proname AS name, n.nspname AS schema, p.proconfig AS config FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE p.proname LIKE 'toolgate\\_%' OR p.proname = 'toolkits_refuse_system_delete' ORDER BY 1`,
    );
    expect(functions.length).toBeGreaterThan(5);
    expect(functions.filter((f) => f.schema !== 'toolgate')).toEqual([]);
    expect(functions.filter((f) => f.name !== 'toolgate_dot' && !(f.config ?? []).includes('search_path=toolgate'))).toEqual([]);
    const triggers = await rows<{ schema: string }>(
      `SELECT DISTINCT n.nspname AS schema FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE NOT t.tgisinternal`,
    );
    expect(triggers).toEqual([{ schema: 'toolgate' }]);
  });

  test("then a run that calls a host tool writes its record in the schema, and the tool is given the host's Sequelize", async () => {
    const kit = await tg.toolkits.create({ name: 'Orders', member_tool_ids: ['lookup_order'] });
    const agent = await tg.agents.create({ name: 'Sundae', toolkit_ids: [kit.id] });
    const res = await request(appOf(tg))
      .post(`/api/agents/${agent.id}/tool-calls`)
      .set('Authorization', `Bearer ${CLIENT}`)
      .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', output: { order_id: 'SCP-1042', status: 'delivered' } });
    expect(contexts).toEqual([host]);
    expect(await rows(`SELECT tool_id, status, routing_key FROM toolgate.tool_calls`)).toEqual([
      { tool_id: 'lookup_order', status: 'success', routing_key: 'jane@acme.com' },
    ]);
    expect(await rows(`SELECT name FROM toolgate.agents`)).toEqual([{ name: 'Sundae' }]);
    expect(await publicSchema()).toEqual(hostBefore);
  });

  test("then the host's own SQL on a toolgate table, from a session on public, fires triggers that find toolgate's tables and tell the schema's channel", async () => {
    const [agent] = await rows<{ id: number }>(`SELECT id FROM toolgate.agents WHERE name = 'Sundae'`);
    const [before] = await rows<{ version: string }>(`SELECT version FROM toolgate.agent_policy_versions WHERE agent_id = :id`, {
      id: agent!.id,
    });
    const heard: string[] = [];
    await withClient(db.url, async (listener) => {
      listener.on('notification', (m) => heard.push(`${m.channel} ${m.payload}`));
      await listener.query('LISTEN toolgate_policy; LISTEN toolgate_policy_toolgate; LISTEN toolgate_policy_other');
      await withClient(db.url, (c) => c.query(`UPDATE toolgate.agents SET description = 'Triage' WHERE id = $1`, [agent!.id]));
      await listener.query('SELECT 1');
    });
    expect(heard).toEqual([`toolgate_policy_toolgate ${agent!.id}`]);
    const [after] = await rows<{ version: string }>(`SELECT version FROM toolgate.agent_policy_versions WHERE agent_id = :id`, {
      id: agent!.id,
    });
    expect(Number(after!.version)).toBe(Number(before!.version) + 1);
  });
});

describe('when a second toolgate keeps its tables in another schema of the same database', () => {
  let other: Toolgate;
  beforeAll(() => {
    other = toolgateIn('other');
  });
  afterAll(() => other.close());

  test("then it migrates while the first's migration lock is held, since each schema's lock is its own", async () => {
    const applied = await withMigrationLock(internalsOf(tg).sequelize, () => other.migrate());
    expect(applied.length).toBeGreaterThan(20);
    expect(await rows(`SELECT count(*)::int AS n FROM other.agents`)).toEqual([{ n: 0 }]);
  });

  test("then a change to the first's grants drops the first's cached policy, and never the second's", async () => {
    const first = internalsOf(tg).runs;
    const second = internalsOf(other).runs;
    const agentOf = async (t: Toolgate) => (await t.agents.create({ name: 'Scout', toolkit_ids: [] })).id;
    const [a, b] = [await agentOf(tg), await agentOf(other)];
    const heard = (runs: typeof first) => {
      const told: Invalidation[] = [];
      (runs.policies as unknown as NodeJS.EventEmitter).on('invalidated', (i: Invalidation) => i.source === 'notification' && told.push(i));
      return told;
    };
    const [toFirst, toSecond] = [heard(first), heard(second)];
    for (const runs of [first, second]) {
      const policies = runs.policies as unknown as NodeJS.EventEmitter & { listenerState: string };
      const listening = once(policies, 'listening');
      runs.startListening();
      // The first's listener may hold already: its run above opened it.
      if (policies.listenerState !== 'listening') await listening;
    }
    const notified = (runs: typeof first) =>
      new Promise<void>((resolve) =>
        (runs.policies as unknown as NodeJS.EventEmitter).on('invalidated', (i: Invalidation) => i.source === 'notification' && resolve()),
      );

    // From a session of the host's, on public, as an operator's psql would: the first's, then the second's.
    const firstTold = notified(first);
    await withClient(db.url, (c) => c.query(`UPDATE toolgate.agents SET description = 'x' WHERE id = $1`, [a]));
    await firstTold;
    const secondTold = notified(second);
    await withClient(db.url, (c) => c.query(`UPDATE other.agents SET description = 'y' WHERE id = $1`, [b]));
    await secondTold;
    // Notifications reach a listener in commit order: had the first's reached the second, it would be there first.
    expect(toFirst.map((i) => i.agentIds)).toEqual([[a]]);
    expect(toSecond.map((i) => i.agentIds)).toEqual([[b]]);
  });
});

describe('when the migrations are undone in the schema, and applied again', () => {
  test('then the schema loses every toolgate table and function, public stays as it was, and they all come back', async () => {
    const own = internalsOf(tg).sequelize;
    const reverted = await migrateDown(own, { to: 0 });
    expect(reverted.length).toBeGreaterThan(20);
    expect(await rows(`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'toolgate'`)).toEqual([{ t: 'SequelizeMeta' }]);
    expect(await rows(`SELECT proname FROM pg_proc WHERE pronamespace = 'toolgate'::regnamespace`)).toEqual([]);
    expect(await publicSchema()).toEqual(hostBefore);

    await tg.migrate();
    const inSchema = await rows<{ t: string }>(TABLES_IN_SCHEMA);
    expect(inSchema.map((r) => r.t)).toEqual([...TOOLGATE_TABLES.map((t) => t.name), 'SequelizeMeta'].sort());
    expect(await publicSchema()).toEqual(hostBefore);
  });
});

describe('when the schema is named', () => {
  test.each(['Tool-Gate', 'toolgate;drop', 'public', 'pg_toolgate', 'information_schema', '', 'x'.repeat(48), 7])(
    'then %p is refused at construction with ERR_TOOLGATE_DB_SCHEMA',
    (schema) => {
      expect(() => createToolgate({ sequelize: host, schema: schema as string })).toThrow(
        expect.objectContaining({ code: 'ERR_TOOLGATE_DB_SCHEMA' }),
      );
      expect(() => createSequelize(db.url, { schema: schema as string })).toThrow(
        expect.objectContaining({ code: 'ERR_TOOLGATE_DB_SCHEMA' }),
      );
    },
  );

  test("then tg.close() closes the pool it opened for the schema, and never the host's", async () => {
    const t = toolgateIn('closing');
    const own = internalsOf(t).sequelize;
    expect(own).not.toBe(host);
    await own.query('SELECT 1');
    await t.close();
    await expect(own.query('SELECT 1')).rejects.toThrow();
    await expect(host.query('SELECT 1')).resolves.toBeDefined();
  });

  test('then a Sequelize made in that schema (createSequelize(url, { schema })) is used as it is, with no pool of its own', async () => {
    const inSchema = createSequelize(db.url, { schema: 'toolgate' });
    try {
      const t = createToolgate({ sequelize: inSchema, schema: 'toolgate', adminToken: ADMIN });
      expect(internalsOf(t).sequelize).toBe(inSchema);
      await t.close();
      const [where] = await inSchema.query<{ path: string }>('SHOW search_path', { type: QueryTypes.SELECT });
      expect(where).toEqual({ search_path: 'toolgate' });
    } finally {
      await inSchema.close();
    }
  });
});

function appOf(t: Toolgate): express.Express {
  const app = express();
  app.use('/api', t.router);
  return app;
}
