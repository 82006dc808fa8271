// The policy tables tell every change, whoever makes it: each statement on agents, agent access
// rules, attachments, gate rules or toolkits NOTIFYs the ids of the agents whose policy it changed
// (both owners when a row moves), and raises their policy versions, in the same transaction.
import { QueryTypes, type Sequelize } from 'sequelize';
import { pg, type PgClient } from '../../src/db/connect';
import { createTestDatabase, type TestDatabase } from '../support/database';

/** The channel the triggers NOTIFY on, as the migrations spell it, and the listener LISTENs on. */
const CHANNEL = 'toolgate_policy';

let db: TestDatabase;
let sql: Sequelize;
let listener: PgClient;
const received: string[] = [];
let waiting: ((payload: string) => void) | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  sql = db.sequelize;
  listener = new pg.Client({ connectionString: db.url });
  listener.on('notification', (m) => {
    if (m.channel !== CHANNEL) return;
    received.push(m.payload ?? '');
    waiting?.(m.payload ?? '');
  });
  await listener.connect();
  await listener.query(`LISTEN ${CHANNEL}`);
});

afterAll(async () => {
  await listener.end();
  await db.drop();
});

const one = async <T extends object>(query: string, replacements: Record<string, unknown> = {}) =>
  (await sql.query<T>(query, { replacements, type: QueryTypes.SELECT }))[0] as T;

/**
 * Runs the statement, then a marker NOTIFY of our own: notifications arrive in commit order, so once
 * the marker is here, everything the statement told is too.
 */
async function told(statement: string, replacements: Record<string, unknown> = {}): Promise<Set<string>> {
  received.length = 0;
  await sql.query(statement, { replacements });
  const marker = `marker-${Math.random()}`;
  const arrived = new Promise<void>((resolve) => {
    waiting = (payload) => {
      if (payload === marker) resolve();
    };
  });
  await sql.query(`SELECT pg_notify('${CHANNEL}', :marker)`, { replacements: { marker } });
  await arrived;
  return new Set(received.filter((p) => p !== marker).flatMap((p) => p.split(',')));
}

const version = async (agentId: number) =>
  Number((await one<{ version: string | null }>('SELECT toolgate_policy_version(:agentId) AS version', { agentId }))?.version ?? NaN);

let a1: number;
let a2: number;
let kit: number;
let att1: number;

beforeAll(async () => {
  a1 = (await one<{ id: number }>("INSERT INTO agents (name) VALUES ('N1') RETURNING id")).id;
  a2 = (await one<{ id: number }>("INSERT INTO agents (name) VALUES ('N2') RETURNING id")).id;
  kit = (await one<{ id: number }>("INSERT INTO toolkits (name, member_tool_ids) VALUES ('NKit', ARRAY['lookup_order']) RETURNING id")).id;
  att1 = (await one<{ id: number }>('INSERT INTO agent_toolkits (agent_id, toolkit_id) VALUES (:a1, :kit) RETURNING id', { a1, kit })).id;
  await sql.query('INSERT INTO agent_toolkits (agent_id, toolkit_id) VALUES (:a2, :kit)', { replacements: { a2, kit } });
  await told('SELECT 1'); // what the setup told has all arrived
});

describe('when a policy table changes by plain SQL', () => {
  test('then a new agent gets a version row, and is told', async () => {
    const ids = await told("INSERT INTO agents (name) VALUES ('N3')");
    const id = (await one<{ id: number }>("SELECT id FROM agents WHERE name = 'N3'")).id;
    expect(ids).toEqual(new Set([String(id)]));
    expect(await version(id)).toBe(1);
  });

  test('then an agent renamed is told, and its version raised', async () => {
    const before = await version(a1);
    expect(await told("UPDATE agents SET system_prompt = 'Be brief.' WHERE id = :a1", { a1 })).toEqual(new Set([String(a1)]));
    expect(await version(a1)).toBe(before + 1);
  });

  test('then an access rule added, changed or removed tells its agent', async () => {
    expect(await told("INSERT INTO agent_access_rules (agent_id, kind, pattern) VALUES (:a1, 'allow', '*@thescoop.com')", { a1 })).toEqual(
      new Set([String(a1)]),
    );
    expect(await told('UPDATE agent_access_rules SET agent_id = :a2 WHERE agent_id = :a1', { a1, a2 })).toEqual(
      new Set([String(a1), String(a2)]),
    );
    expect(await told('DELETE FROM agent_access_rules WHERE agent_id = :a2', { a2 })).toEqual(new Set([String(a2)]));
  });

  test('then a gate rule tells the agent of its attachment, and a rule moved tells both', async () => {
    const before = await version(a1);
    expect(
      await told("INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern) VALUES (:att1, 'allow', 'mara@thescoop.com')", {
        att1,
      }),
    ).toEqual(new Set([String(a1)]));
    expect(await version(a1)).toBe(before + 1);
    const att2 = (await one<{ id: number }>('SELECT id FROM agent_toolkits WHERE agent_id = :a2', { a2 })).id;
    expect(await told('UPDATE agent_toolkit_rules SET agent_toolkit_id = :att2 WHERE agent_toolkit_id = :att1', { att1, att2 })).toEqual(
      new Set([String(a1), String(a2)]),
    );
    expect(await told('DELETE FROM agent_toolkit_rules WHERE agent_toolkit_id = :att2', { att2 })).toEqual(new Set([String(a2)]));
  });

  test('then an attachment changed or moved tells its old and new agent', async () => {
    expect(await told('UPDATE agent_toolkits SET allow_proactive = true WHERE id = :att1', { att1 })).toEqual(new Set([String(a1)]));
    const a3 = (await one<{ id: number }>("SELECT id FROM agents WHERE name = 'N3'")).id;
    expect(await told('UPDATE agent_toolkits SET agent_id = :a3 WHERE id = :att1', { att1, a3 })).toEqual(
      new Set([String(a1), String(a3)]),
    );
    expect(await told('UPDATE agent_toolkits SET agent_id = :a1 WHERE id = :att1', { att1, a1 })).toEqual(
      new Set([String(a1), String(a3)]),
    );
  });

  test("then a toolkit's members changed tell every agent holding it, and its description tells no one", async () => {
    expect(await told("UPDATE toolkits SET member_tool_ids = ARRAY['lookup_order', 'send_email'] WHERE id = :kit", { kit })).toEqual(
      new Set([String(a1), String(a2)]),
    );
    expect(await told("UPDATE toolkits SET description = 'only words' WHERE id = :kit", { kit })).toEqual(new Set());
  });

  test('then a toolkit deleted tells every agent that held it, through its cascaded attachments', async () => {
    const doomed = (await one<{ id: number }>("INSERT INTO toolkits (name) VALUES ('Doomed') RETURNING id")).id;
    await sql.query('INSERT INTO agent_toolkits (agent_id, toolkit_id) VALUES (:a1, :doomed), (:a2, :doomed)', {
      replacements: { a1, a2, doomed },
    });
    await sql.query(
      "INSERT INTO agent_toolkit_rules (agent_toolkit_id, kind, pattern) SELECT id, 'deny', 'x@y.com' FROM agent_toolkits WHERE toolkit_id = :doomed",
      { replacements: { doomed } },
    );
    expect(await told('DELETE FROM toolkits WHERE id = :doomed', { doomed })).toEqual(new Set([String(a1), String(a2)]));
  });

  test('then an agent deleted is told, its attachments go with it, and its version row too', async () => {
    const gone = (await one<{ id: number }>("INSERT INTO agents (name) VALUES ('Gone') RETURNING id")).id;
    await sql.query('INSERT INTO agent_toolkits (agent_id, toolkit_id) VALUES (:gone, :kit)', { replacements: { gone, kit } });
    expect(await told('DELETE FROM agents WHERE id = :gone', { gone })).toEqual(new Set([String(gone)]));
    expect(await one('SELECT version FROM agent_policy_versions WHERE agent_id = :gone', { gone })).toBeUndefined();
    expect(await version(gone)).toBeNaN();
  });

  test('then a change that rolls back tells no one and raises nothing', async () => {
    const before = await version(a1);
    const ids = await told(
      `DO $$ BEGIN UPDATE agents SET name = 'Never' WHERE id = ${a1}; RAISE EXCEPTION 'undo'; EXCEPTION WHEN OTHERS THEN NULL; END $$`,
    );
    expect(ids).toEqual(new Set());
    expect(await version(a1)).toBe(before);
  });

  test('then a change reaching more than 2000 agents tells "*" (drop everything) in one notification', async () => {
    await sql.query("INSERT INTO agents (name) SELECT 'Bulk ' || g FROM generate_series(1, 2100) g");
    const ids = await told("UPDATE agents SET system_prompt = 'bulk' WHERE name LIKE 'Bulk %'");
    expect(ids).toEqual(new Set(['*']));
  });

  test('then a change reaching more than 2000 agents raises the one epoch row, and with it every version', async () => {
    const bulk = (await one<{ id: number }>("SELECT id FROM agents WHERE name = 'Bulk 7'")).id;
    const [before, beforeOther, rows] = [
      await version(bulk),
      await version(a1),
      await one<{ n: string }>('SELECT count(*) AS n FROM agent_policy_versions'),
    ];
    await told("UPDATE agents SET system_prompt = 'bulk again' WHERE name LIKE 'Bulk %'");
    expect(await version(bulk)).toBe(before + 1);
    expect(await version(a1)).toBe(beforeOther + 1);
    expect((await one<{ n: string }>('SELECT count(*) AS n FROM agent_policy_versions')).n).toBe(rows.n);
  });

  test('then agents added in bulk each have a version though they have no version row', async () => {
    const before = Number((await one<{ epoch: string }>('SELECT epoch FROM policy_epoch')).epoch);
    await told("INSERT INTO agents (name) SELECT 'Many ' || g FROM generate_series(1, 2001) g");
    const many = (await one<{ id: number }>("SELECT id FROM agents WHERE name = 'Many 2001'")).id;
    expect(await one('SELECT version FROM agent_policy_versions WHERE agent_id = :many', { many })).toBeUndefined();
    expect(await version(many)).toBe(before + 1);
  });

  test('then 1000 agents are told in notifications of at most 500 ids, each under the payload limit', async () => {
    received.length = 0;
    const ids = await told("UPDATE agents SET system_prompt = 'half' WHERE name IN (SELECT 'Bulk ' || g FROM generate_series(1, 1000) g)");
    expect(ids.size).toBe(1000);
  });

  test('then a TRUNCATE tells "*" and raises every version through the epoch', async () => {
    const before = await version(a1);
    expect(await told('TRUNCATE agent_toolkit_rules')).toEqual(new Set(['*']));
    expect(await version(a1)).toBe(before + 1);
  });
});
