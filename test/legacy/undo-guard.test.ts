// Issue 29, item 2: `npm run migrate -- --undo` drops every table of toolgate's, so it refuses while
// an instance on the database is alive by its heartbeat (toolgate_instances), naming each (id, host,
// pid, last beat), and changes nothing; --force undoes anyway; an instance that stopped, or whose
// heartbeat is older than its own timeout, does not hold it back.
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createToolgate, internalsOf, type Toolgate } from '../../src/toolgate';
import { createTestDatabase, type TestDatabase } from '../support/database';

jest.setTimeout(60_000);

const ROOT = path.join(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

function undo(db: TestDatabase, args: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      TSX,
      [path.join(ROOT, 'src', 'app', 'cli', 'migrate.ts'), '--undo', ...args],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: db.url, TOOLGATE_DEMO: 'off' } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const applied = async (sql: Sequelize) =>
  (await sql.query<{ n: number }>(`SELECT count(*)::integer AS n FROM "SequelizeMeta"`, { type: QueryTypes.SELECT }))[0]!.n;
const toolgateTables = async (sql: Sequelize) =>
  (
    await sql.query<{ n: number }>(`SELECT count(*)::integer AS n FROM pg_tables WHERE schemaname = 'public'`, { type: QueryTypes.SELECT })
  )[0]!.n;

const databases: TestDatabase[] = [];
afterAll(() => Promise.all(databases.map((db) => db.drop())));

describe('when an instance is alive on the database', () => {
  let db: TestDatabase;
  let tg: Toolgate;
  let id: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    databases.push(db);
    tg = createToolgate({ sequelize: db.sequelize, adminToken: 'undo-admin-token-0123456789' });
    // As the service does at its start: it beats from then on.
    const instances = internalsOf(tg).instances;
    await instances.register();
    id = instances.id;
  });
  afterAll(() => tg.close());

  test('then the undo refuses, naming it by id, host, pid and last beat, and changes nothing', async () => {
    const before = await applied(db.sequelize);
    const refused = await undo(db);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('migrate --undo refused: The schema was not undone, nothing was changed');
    expect(refused.stderr).toContain(`${id} on ${os.hostname()} (pid ${process.pid}), last heartbeat 20`);
    expect(refused.stderr).toContain('alive until it is 30 s old');
    expect(refused.stderr).toContain('--force');
    expect(await applied(db.sequelize)).toBe(before);

    const json = await undo(db, ['--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ refused: 'TOOLGATE_INSTANCES_ALIVE', instances: [{ id, pid: process.pid }] });
  });

  test('then --force undoes anyway, and says which instance it went past', async () => {
    const forced = await undo(db, ['--force']);
    expect(forced.stderr).toBe('');
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain(`Forced past ${id} on ${os.hostname()} (pid ${process.pid}): it now answers 503 tables_missing.`);
    expect(forced.stdout).toContain('SequelizeMeta dropped');
    expect(await toolgateTables(db.sequelize)).toBe(0);
  });
});

describe('when the instances on the database stopped, or went silent for longer than their own timeout', () => {
  test('then only one still within its own timeout holds the undo back, and once it says it stopped, the undo runs', async () => {
    const db = await createTestDatabase();
    databases.push(db);
    await db.sequelize.query(`
      INSERT INTO toolgate_instances (id, heartbeat_at, hostname, pid, stale_after_ms, stopped_at) VALUES
        ('inst_stopped', now(), 'web-1', 101, 30000, now()),
        ('inst_crashed', now() - interval '40 seconds', 'web-2', 102, 30000, NULL),
        ('inst_patient', now() - interval '40 seconds', 'web-3', 103, 120000, NULL);
      -- An instance of an earlier version recorded neither its host nor its timeout: 30 s counts for it.
      INSERT INTO toolgate_instances (id, heartbeat_at) VALUES ('inst_older', now() - interval '31 seconds');
    `);
    const refused = await undo(db);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('inst_patient on web-3 (pid 103)');
    expect(refused.stderr).toContain('alive until it is 120 s old');
    expect(refused.stderr).not.toMatch(/inst_stopped|inst_crashed|inst_older/);

    await db.sequelize.query(`UPDATE toolgate_instances SET stopped_at = now() WHERE id = 'inst_patient'`);
    const done = await undo(db);
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    expect(done.stdout).not.toContain('Forced past');
    expect(await toolgateTables(db.sequelize)).toBe(0);
  });
});
