// The two commands, run as an admin runs them (through tsx, against a real database): the deploy
// path `npm run migrate` on a legacy database, and `migrate:enabled-tools` with each mode.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createEmptyDatabase, type TestDatabase } from '../support/database';
import { buildLegacyDatabase, LEGACY_AGENTS } from './fixtures/legacy-database';
import { fingerprint } from './support/snapshots';

const ROOT = path.join(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

let db: TestDatabase;
let sql: Sequelize;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(script: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      TSX,
      [path.join(ROOT, 'src', 'app', 'cli', script), ...args],
      {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: db.url, TOOLGATE_DEMO: 'off', TOOLGATE_LOG: 'silent' },
        maxBuffer: 10 * 1024 * 1024,
      },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  db = await createEmptyDatabase();
  sql = db.sequelize;
  await buildLegacyDatabase(sql);
});
afterAll(() => db.drop());

describe('when migrate:enabled-tools is called without exactly one mode', () => {
  test('then it prints the usage and exits 2, touching nothing', async () => {
    const none = await run('migrate-enabled-tools.ts', []);
    expect(none).toMatchObject({ code: 2, stdout: '' });
    expect(none.stderr).toContain('say what to do: --dry-run, --apply or --undo');
    const both = await run('migrate-enabled-tools.ts', ['--undo', '--map-typos']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--map-typos applies to --dry-run and --apply');
  });
});

describe('when an admin previews a legacy database before adopting it', () => {
  test('then --dry-run --json prints the report and changes nothing', async () => {
    const before = await fingerprint(sql);
    const result = await run('migrate-enabled-tools.ts', ['--dry-run', '--json']);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ mode: 'dry_run', agents: { read: LEGACY_AGENTS.length }, verification: { status: 'passed' } });
    expect(await fingerprint(sql)).toEqual(before);
  });

  test('then --apply refuses while the schema migrations are pending', async () => {
    const result = await run('migrate-enabled-tools.ts', ['--apply']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('run npm run migrate');
  });
});

describe('when the deploy path runs on the legacy database', () => {
  test('then, not told to adopt the legacy tables, it refuses naming them and the flag, and changes nothing', async () => {
    const before = await fingerprint(sql);
    const result = await run('migrate.ts', []);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('"agents", "tool_calls", "documents", "tasks"');
    expect(result.stderr).toContain('npm run migrate -- --adopt-legacy-tables');
    expect(await fingerprint(sql)).toEqual(before);
  });

  test('then, with --adopt-legacy-tables, it adopts the schema, migrates every agent, verifies, and reports as JSON', async () => {
    const result = await run('migrate.ts', ['--json', '--adopt-legacy-tables']);
    expect(result.stderr).toBe('');
    const out = JSON.parse(result.stdout);
    expect(out.schema_migrations_applied[0]).toBe('20261130000001-create-agents.ts');
    expect(out.enabled_tools).toMatchObject({
      mode: 'apply',
      committed: true,
      agents: { follow: LEGACY_AGENTS.length },
      verification: { status: 'passed' },
    });
    const [grants] = await sql.query<{ n: string }>("SELECT count(*) AS n FROM agent_toolkits WHERE origin = 'legacy'", {
      type: QueryTypes.SELECT,
    });
    expect(Number(grants!.n)).toBe(out.enabled_tools.changes.attachments_created);
  });

  test('then running it again applies nothing and changes nothing', async () => {
    const result = await run('migrate.ts', []);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Schema: up to date.');
    expect(result.stdout).toContain('Changes: 0 toolkits created, 0 grants made, 0 grants removed.');
  });
});

describe('when the admin undoes and re-applies by hand', () => {
  test('then --undo removes the grants and prints a readable report', async () => {
    const result = await run('migrate-enabled-tools.ts', ['--undo']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^enabled_tools migration, undo, committed\n\nRemoved 13 legacy grants \(from 13 agents\) and 7 legacy toolkits\./,
    );
  });

  test('then --apply --map-typos grants the suggestions too', async () => {
    const result = await run('migrate-enabled-tools.ts', ['--apply', '--map-typos']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('enabled_tools migration, apply, committed (mapping typos)');
    expect(result.stdout).toContain('4 agents granted a mapped typo');
    // The access it changed, said as such, and parity said to be checked against the mapped reading.
    expect(result.stdout).toContain(
      'Mapped typos changed the access of 4 agents: each now gets a tool its legacy string grants nothing for:',
    );
    expect(result.stdout).toMatch(/^ {2}#\d+ .+: \w+ \(from ".+"\)$/m);
    expect(result.stdout).toContain('checked against the legacy one read with the mapped typos above');
    expect(result.stdout).not.toContain('the legacy answer equals the new one');
  });
});
