// docs/MIGRATING.md's steps, word for word, as an operator runs them on the database of a live legacy
// deployment: the documented commands as child processes with DATABASE_URL set and every other
// setting at its default. No demo may reach that database, no demo tool may be granted, and the
// documented way back must give the database back as a pg_dump of it was before the first step.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createSequelize } from '../../src/db/connect';
import { withClient, withDatabase } from '../../src/db/database-url';
import { buildLegacyDatabase, insertLegacyAgents } from './fixtures/legacy-database';
import { shellEnv, startService, type RunningService } from '../support/service-process';
import { startDebianCluster, type DebianCluster } from './support/debian-postgres';

jest.setTimeout(60_000);

const ROOT = path.join(__dirname, '..', '..');
const ADMIN_TOKEN = 'guide-admin-token-0123456789';

let cluster: DebianCluster;
let url: string;
let sql: Sequelize;
let dataDir: string;
let backup: string;
let orderDesk: number;
let service: RunningService | undefined;
/** The rows the legacy application wrote while toolgate served, by table. */
const legacyWrites: { table: string; ids: number[] }[] = [];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The operator's shell: DATABASE_URL exported, nothing of toolgate's set (TOOLGATE_DEMO at its default). */
function operatorEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...shellEnv(), DATABASE_URL: url, TOOLGATE_DATA_DIR: dataDir, ...extra };
}

/** One documented command line, e.g. `npm run migrate`, run from the repository. */
function sh(command: string, args: string[], extra: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: ROOT, env: operatorEnv(extra), maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const rows = <T extends object>(query: string) => sql.query<T>(query, { type: QueryTypes.SELECT });
const run = promisify(execFile);

beforeAll(async () => {
  cluster = await startDebianCluster();
  url = withDatabase(cluster.url, 'legacy');
  await withClient(cluster.url, (c) => c.query('CREATE DATABASE legacy'));
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-guide-'));
  sql = createSequelize(url);
  await buildLegacyDatabase(sql);
  // A legacy agent holding a token that is also the name of a demo tool.
  [orderDesk] = await insertLegacyAgents(sql, [{ name: 'Order desk', enabled_tools: 'lookup_order, email_analyzer' }]);
});

afterAll(async () => {
  service?.kill();
  await sql?.close().catch(() => undefined);
  await cluster?.stop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

describe('when an operator follows docs/MIGRATING.md on a live legacy database', () => {
  test('then step 1, the backup, is a pg_dump of the legacy database', async () => {
    backup = await cluster.dump(url);
    expect(backup).toContain('CREATE TABLE public.agents');
    expect(backup).toContain('Order desk');
  });

  test('then step 2, the preview, registers the four builtins only and changes nothing', async () => {
    const preview = await sh('npm', ['run', 'migrate:enabled-tools', '--', '--dry-run']);
    expect(preview.stderr).not.toContain('failed');
    expect(preview.code).toBe(0);
    expect(preview.stdout).toContain('Registered tools: document_search, email_analyzer, reply_generator, task_creator\n');
    expect(preview.stdout).toMatch(/"lookup_order"\s+no registered id is close/);
    expect(await cluster.dump(url)).toBe(backup);
  });

  test('then step 4, npm run migrate -- --adopt-legacy-tables, adopts the schema and grants with the four builtins only', async () => {
    const deploy = await sh('npm', ['run', 'migrate', '--', '--adopt-legacy-tables']);
    expect(deploy.stderr).not.toContain('failed');
    expect(deploy.code).toBe(0);
    expect(deploy.stdout).toContain('Registered tools: document_search, email_analyzer, reply_generator, task_creator\n');
    expect(await rows("SELECT name FROM toolkits WHERE 'lookup_order' = ANY(member_tool_ids)")).toEqual([]);
  });

  test('then step 4, npm start, seeds no demo, registers no demo tool and grants none', async () => {
    // `npm start` runs `tsx src/app/server.ts`; it is started directly so that SIGTERM reaches the service (README).
    service = await startService({ env: operatorEnv({ TOOLGATE_ADMIN_TOKEN: ADMIN_TOKEN }) });

    expect(await rows("SELECT name FROM agents WHERE name IN ('Sundae', 'Scout')")).toEqual([]);
    expect(await rows("SELECT tablename FROM pg_tables WHERE tablename LIKE 'scoop\\_%'")).toEqual([]);
    expect(await rows("SELECT name FROM toolkits WHERE name IN ('Support', 'Finance', 'Operations')")).toEqual([]);
    expect(await rows("SELECT name FROM toolkits WHERE 'lookup_order' = ANY(member_tool_ids)")).toEqual([]);

    const base = `${service.url}/api`;
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const tools = (await (await fetch(`${base}/tools`, { headers: auth })).json()) as { id: string }[];
    expect(tools.map((t) => t.id).sort()).toEqual(['document_search', 'email_analyzer', 'reply_generator', 'task_creator']);
    const offered = (await (await fetch(`${base}/agents/${orderDesk}/tools?sender=jane@acme.com`, { headers: auth })).json()) as {
      tools: string[];
    };
    expect(offered.tools).toEqual(['email_analyzer']);
    expect(service.output()).toMatch(/demo off.*DATABASE_URL/);
  });

  test('then step 5, side by side: legacy clients call tools through toolgate, and the legacy application writes rows of its own', async () => {
    const call = (tool: string, input: unknown) =>
      fetch(`${service!.url}/api/agents/${orderDesk}/tool-calls`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tool, input, sender: 'jane@acme.com' }),
      });
    // Granted by the legacy string, and refused at dispatch (a status the legacy application never writes).
    expect((await call('email_analyzer', { body: 'My order SCP-1042 arrived melted.' })).status).toBe(200);
    expect((await call('document_search', { query: 'pistachio' })).status).toBe(403);
    expect(await rows('SELECT status FROM tool_calls WHERE tool_id IS NOT NULL ORDER BY id')).toEqual([
      { status: 'success' },
      { status: 'denied' },
    ]);

    const ids = async (table: string, query: string) =>
      legacyWrites.push({ table, ids: (await rows<{ id: number }>(query)).map((r) => r.id) });
    await ids(
      'tool_calls',
      `INSERT INTO tool_calls (agent_id, tool_name, input_data, status, execution_time_ms) VALUES (${orderDesk}, 'email_analyzer', '{"subject": "Late"}', 'success', 91.5) RETURNING id`,
    );
    await ids('tasks', `INSERT INTO tasks (agent_id, title) VALUES (${orderDesk}, 'Call the courier') RETURNING id`);
    legacyWrites.push({ table: 'agents', ids: await insertLegacyAgents(sql, [{ name: 'Added since', enabled_tools: 'task_creator' }]) });
  });

  test('then step 6 refuses while the service is still running, naming it, and changes nothing', async () => {
    // The running service's own bookkeeping (its heartbeat every few seconds, the rate limiter's
    // hits written in the background) moves on its own schedule: every other row is compared.
    const quiet = ['--exclude-table-data=toolgate_instances', '--exclude-table-data=toolgate_rate_limits'];
    const before = await cluster.dump(url, quiet);
    const back = await sh('npm', ['run', 'migrate', '--', '--undo']);
    expect(back.code).toBe(1);
    expect(back.stderr).toMatch(new RegExp(`migrate --undo refused: .*inst_[0-9a-f]+ on ${os.hostname()} \\(pid \\d+\\), last heartbeat`));
    expect(await cluster.dump(url, quiet)).toBe(before);
  });

  test("then step 6, the way back with the service stopped, gives back the backup plus the legacy application's own rows", async () => {
    expect((await service!.stop()).code).toBe(0);
    const back = await sh('npm', ['run', 'migrate', '--', '--undo']);
    expect(back.stderr).not.toContain('failed');
    expect(back.code).toBe(0);
    expect(back.stdout).toContain('tool_calls: 2 row(s) toolgate wrote removed (those with tool_id or run)');
    // Newest first, down to the first migration, which adopted the legacy agents table.
    expect(back.stdout).toMatch(/^Schema migrations reverted: .*, 20261130000001-create-agents\.ts$/m);
    expect(back.stdout).toContain('SequelizeMeta dropped');
    expect(await cluster.dump(url)).toBe(await backupPlusLegacyWrites());
  });
});

/**
 * The backup of step 1, restored into a database of its own, plus the rows the legacy application
 * wrote since (copied with the ids it got), and each sequence where the live database has it: the
 * ids toolgate's rows took are not given again. Anything else toolgate left (a row, a column, an
 * index, a comment) makes the two dumps differ.
 */
async function backupPlusLegacyWrites(): Promise<string> {
  const expectedUrl = withDatabase(cluster.url, 'legacy_expected');
  await withClient(cluster.url, (c) => c.query('CREATE DATABASE legacy_expected'));
  const file = path.join(dataDir, 'backup.sql');
  await fs.writeFile(file, backup);
  await run(path.join(cluster.bin, 'psql'), ['--dbname', expectedUrl, '--quiet', '-v', 'ON_ERROR_STOP=1', '--file', file]);
  const expected = createSequelize(expectedUrl);
  try {
    for (const { table, ids } of legacyWrites) {
      const [found] = await rows<{ json: string }>(
        `SELECT json_agg(t ORDER BY t.id)::text AS json FROM ${table} t WHERE t.id IN (${ids.join(', ')})`,
      );
      await expected.query(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, :json::json)`, {
        replacements: { json: found!.json },
      });
    }
    for (const { s } of await rows<{ s: string }>(`SELECT sequencename AS s FROM pg_sequences WHERE schemaname = 'public'`)) {
      const [at] = await rows<{ last_value: string; is_called: boolean }>(`SELECT last_value, is_called FROM ${s}`);
      await expected.query(`SELECT setval('${s}', ${at!.last_value}, ${at!.is_called})`);
    }
  } finally {
    await expected.close();
  }
  return cluster.dump(expectedUrl);
}

describe('when the legacy database already keeps a SequelizeMeta of its own', () => {
  test('then the way back keeps that table and its rows, and the dump still equals the backup', async () => {
    const own = withDatabase(cluster.url, 'legacy_with_meta');
    await withClient(cluster.url, (c) => c.query('CREATE DATABASE legacy_with_meta'));
    const other = createSequelize(own);
    try {
      await buildLegacyDatabase(other);
      await other.query(
        `CREATE TABLE "SequelizeMeta" (name varchar(255) PRIMARY KEY); INSERT INTO "SequelizeMeta" VALUES ('00000000000001-legacy-billing.js')`,
      );
      const before = await cluster.dump(own);
      const env = { DATABASE_URL: own };
      expect((await sh('npm', ['run', 'migrate', '--', '--adopt-legacy-tables'], env)).code).toBe(0);
      const back = await sh('npm', ['run', 'migrate', '--', '--undo'], env);
      expect(back.code).toBe(0);
      expect(back.stdout).toContain('SequelizeMeta kept');
      expect(await cluster.dump(own)).toBe(before);
    } finally {
      await other.close();
    }
  });
});
