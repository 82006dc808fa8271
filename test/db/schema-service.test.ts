// Issue 29, item 1, as an operator runs it: the service and its commands with TOOLGATE_DB_SCHEMA on a
// product database that has a `tasks` table of its own. npm run migrate makes toolgate's schema and
// its tables there; the service serves runs that call tools, and the dashboard, from it; the
// enabled_tools migration reads it; the undo takes it all away again. The host's public schema is
// the same throughout.
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import { QueryTypes, type Sequelize } from 'sequelize';
import { signedIn } from '../dashboard/session';
import { createEmptyDatabase, type TestDatabase } from '../support/database';
import { shellEnv, startService, type RunningService } from '../support/service-process';
import { fingerprint } from '../legacy/support/snapshots';

jest.setTimeout(90_000);

const ROOT = path.join(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const ADMIN = 'admin-token-0123456789abcdef';
const CLIENT = 'schema-service-client-0123456789';
const SCHEMA = 'tg_service';

let db: TestDatabase;
let sql: Sequelize;
let dataDir: string;
let service: RunningService | undefined;
let hostBefore: Record<string, string>;

function env(): NodeJS.ProcessEnv {
  return {
    ...shellEnv(),
    DATABASE_URL: db.url,
    TOOLGATE_DB_SCHEMA: SCHEMA,
    TOOLGATE_DATA_DIR: dataDir,
    TOOLGATE_ADMIN_TOKEN: ADMIN,
    TOOLGATE_CLIENT_TOKENS: CLIENT,
  };
}

function cli(script: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(TSX, [path.join(ROOT, 'src', 'app', 'cli', script), ...args], { cwd: ROOT, env: env() }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const rows = <T extends object>(query: string) => sql.query<T>(query, { type: QueryTypes.SELECT });
const tablesOf = async (schema: string) =>
  (await rows<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = '${schema}' ORDER BY 1`)).map((r) => r.t);

beforeAll(async () => {
  db = await createEmptyDatabase();
  sql = db.sequelize;
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-schema-service-'));
  await sql.query(`
    CREATE TABLE tasks (id SERIAL PRIMARY KEY, title TEXT NOT NULL, assignee TEXT);
    INSERT INTO tasks (title, assignee) VALUES ('Restock pistachio', 'mara');
  `);
  hostBefore = await fingerprint(sql);
});

afterAll(async () => {
  service?.kill();
  await db.drop();
  await fs.rm(dataDir, { recursive: true, force: true });
});

describe('when an operator runs toolgate with TOOLGATE_DB_SCHEMA on a database with a tasks table of its own', () => {
  test('then npm run migrate makes the schema and every toolgate table there, and public keeps only the host\u2019s', async () => {
    const migrate = await cli('migrate.ts', []);
    expect(migrate.stderr).toBe('');
    expect(migrate.code).toBe(0);
    expect(await tablesOf(SCHEMA)).toEqual(
      expect.arrayContaining(['SequelizeMeta', 'agents', 'tasks', 'tool_calls', 'toolgate_instances']),
    );
    expect(await tablesOf('public')).toEqual(['tasks']);
    expect(await fingerprint(sql)).toEqual(hostBefore);
  });

  test('then migrate:enabled-tools reads the schema\u2019s agents', async () => {
    const dryRun = await cli('migrate-enabled-tools.ts', ['--dry-run', '--json']);
    expect(dryRun.code).toBe(0);
    expect(JSON.parse(dryRun.stdout)).toMatchObject({ mode: 'dry_run', agents: { read: 0 } });
  });

  test('then the service serves a run that calls a tool from the schema, and the dashboard, and public is untouched', async () => {
    service = await startService({ env: env() });
    const api = (route: string, token: string, body?: unknown) =>
      fetch(`${service!.url}/api${route}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const agent = (await (await api('/agents', ADMIN, { name: 'Sundae' })).json()) as { id: number };
    const call = await api(`/agents/${agent.id}/tool-calls`, CLIENT, {
      tool: 'task_creator',
      input: { title: 'Call Jane back' },
      sender: 'jane@acme.com',
    });
    expect(call.status).toBe(200);
    expect(await call.json()).toMatchObject({ status: 'success' });
    expect(await rows(`SELECT title FROM ${SCHEMA}.tasks`)).toEqual([{ title: 'Call Jane back' }]);
    expect(await rows(`SELECT tool_id, status FROM ${SCHEMA}.tool_calls`)).toEqual([{ tool_id: 'task_creator', status: 'success' }]);
    // The service beats from its start, in the schema: an undo would see it alive.
    expect(await rows(`SELECT count(*)::int AS n FROM ${SCHEMA}.toolgate_instances WHERE stopped_at IS NULL`)).toEqual([{ n: 1 }]);

    const v = await signedIn(service.url as unknown as Express, ADMIN);
    expect((await v.get('/admin/agents')).text).toContain('Sundae');
    const started = await v.post('/admin/migration/jobs', { _csrf: await v.token('/admin/migration'), mode: 'dry_run' });
    expect(started.status).toBe(303);
    let report = '';
    for (let i = 0; i < 100 && !report.includes('Report'); i++) {
      const page = await v.get(started.headers.location!);
      if (!page.text.includes('http-equiv="refresh"')) report = page.text;
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(report).toContain('Report');
    expect(await rows(`SELECT count(*)::int AS n FROM ${SCHEMA}.admin_sessions`)).toEqual([{ n: 1 }]);

    expect((await service.stop()).code).toBe(0);
    expect(await tablesOf('public')).toEqual(['tasks']);
    expect(await fingerprint(sql)).toEqual(hostBefore);
  });

  test('then npm run migrate -- --undo, with the service stopped, takes the schema away, and public is as it was', async () => {
    const undo = await cli('migrate.ts', ['--undo']);
    expect(undo.stderr).toBe('');
    expect(undo.code).toBe(0);
    expect(undo.stdout).toContain(`Schema ${SCHEMA} dropped`);
    expect(await rows(`SELECT nspname FROM pg_namespace WHERE nspname = '${SCHEMA}'`)).toEqual([]);
    expect(await fingerprint(sql)).toEqual(hostBefore);
  });
});
