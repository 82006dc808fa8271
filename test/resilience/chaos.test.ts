// Chaos, against real processes (SEMANTICS §13): a toolgate service is killed with SIGKILL while a
// tool runs, and while a run waits between model steps; PostgreSQL is restarted in the middle of a
// run. After each: every tool ran at most once (its effects are counted in their own table), every
// execution has its record (success, failure or interrupted), no run stays open past the sweep, and
// the caller's retry with the same Idempotency-Key or Message-ID runs nothing twice.
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createSequelize } from '../../src/db/connect';
import { ensureDatabase, withDatabase } from '../../src/db/database-url';
import { migrateUp } from '../../src/db/migrate';
import { completion, startFakeOpenAI, toolCalls, type FakeAnswer, type FakeOpenAI } from '../support/fake-openai';
import { CHAOS_ADMIN_TOKEN, CHAOS_CLIENT_TOKEN } from './chaos-service';
import { startRestartablePostgres, type RestartablePostgres } from './restartable-postgres';

jest.setTimeout(120_000);

let tmp: string;
let pg: RestartablePostgres;
let databaseUrl: string;
let sql: Sequelize;
let fake: FakeOpenAI;
let agent: number;
const services: ChildProcess[] = [];

interface Service {
  url: string;
  child: ChildProcess;
}

/** Starts a service process on the database and the fake model; resolves once it listens. */
async function startService(): Promise<Service> {
  const child = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), path.join(__dirname, 'chaos-service.ts')], {
    env: { ...process.env, DATABASE_URL: databaseUrl, MODEL_BASE_URL: fake.baseURL },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  services.push(child);
  const lines = readline.createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`the service exited with ${code} before it listened`)));
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

async function kill(service: Service): Promise<void> {
  const exited = new Promise((resolve) => service.child.once('exit', resolve));
  service.child.kill('SIGKILL');
  await exited;
}

async function call(
  service: Service,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${CHAOS_CLIENT_TOKEN}`, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function until<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read().catch(() => undefined as T);
    if (value !== undefined && ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const effects = async (label: string) =>
  Number(
    (
      await sql.query<{ n: string }>('SELECT count(*) AS n FROM chaos_effects WHERE label = :label', {
        replacements: { label },
        type: QueryTypes.SELECT,
      })
    )[0]!.n,
  );
/** The effect's records for one sender, oldest first. */
const records = async (sender: string) =>
  (
    await sql.query<{ status: string }>(
      `SELECT status FROM tool_calls WHERE tool_id = 'effect' AND agent_id = :agent AND routing_key = :sender ORDER BY id`,
      {
        replacements: { agent, sender },
        type: QueryTypes.SELECT,
      },
    )
  ).map((r) => r.status);
const openRuns = async () =>
  Number(
    (await sql.query<{ n: string }>('SELECT count(*) AS n FROM agent_runs WHERE completed_at IS NULL', { type: QueryTypes.SELECT }))[0]!.n,
  );
/** The invariants after each blow: nothing `started` past the sweep, and no run left open. */
async function settled(): Promise<void> {
  await until(
    'the sweep to close every started record and open run',
    async () => {
      const [row] = await sql.query<{ started: string; open: string }>(
        `SELECT (SELECT count(*) FROM tool_calls WHERE status = 'started') AS started, (SELECT count(*) FROM agent_runs WHERE completed_at IS NULL) AS open`,
        { type: QueryTypes.SELECT },
      );
      return row!;
    },
    (row) => Number(row.started) === 0 && Number(row.open) === 0,
  );
}

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-chaos-'));
  await fs.chmod(tmp, 0o755); // the server runs as `postgres` when we are root
  pg = await startRestartablePostgres(path.join(tmp, 'data'));
  await ensureDatabase(pg.url, 'chaos');
  databaseUrl = withDatabase(pg.url, 'chaos');
  sql = createSequelize(databaseUrl, { connectTimeoutMs: 1_000 });
  await migrateUp(sql);
  await sql.query('CREATE TABLE chaos_effects (id serial PRIMARY KEY, label text NOT NULL, at timestamptz NOT NULL DEFAULT now())');
  fake = await startFakeOpenAI();
  const setup = await startService();
  const admin = (p: string, body: unknown) =>
    fetch(`${setup.url}${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${CHAOS_ADMIN_TOKEN}` },
      body: JSON.stringify(body),
    }).then(async (r) => (await r.json()) as { id: number });
  const kit = await admin('/api/toolkits', { name: 'Effects', member_tool_ids: ['effect'] });
  agent = (await admin('/api/agents', { name: 'Chaos', toolkit_ids: [kit.id] })).id;
  await kill(setup);
}, 120_000);

afterAll(async () => {
  for (const child of services) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await sql?.close().catch(() => undefined);
  await fake?.close();
  await pg?.close().catch(() => undefined);
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
}, 60_000);

test('when an instance is killed while a tool runs, then the tool ran once, its record ends interrupted, and the retry with the same key runs nothing', async () => {
  const a = await startService();
  const request = { tool: 'effect', input: { label: 'kill-mid-tool', hold_ms: 60_000 }, sender: 'kill-mid-tool@acme.com' };
  void call(a, `/api/agents/${agent}/tool-calls`, request, { 'Idempotency-Key': 'chaos-1' }).catch(() => undefined);
  await until(
    'the tool to start',
    () => effects('kill-mid-tool'),
    (n) => n === 1,
  );
  await kill(a);

  const b = await startService();
  // While the dead instance still looks alive, a retry is told the first is in flight; then, that it was interrupted.
  const retry = await until(
    'the retry to be answered',
    () => call(b, `/api/agents/${agent}/tool-calls`, request, { 'Idempotency-Key': 'chaos-1' }),
    (r) => r.body.code !== 'idempotency_key_in_flight',
  );
  expect(retry).toMatchObject({ status: 409, body: { code: 'interrupted' } });
  await settled();
  expect(await effects('kill-mid-tool')).toBe(1);
  expect(await records('kill-mid-tool@acme.com')).toEqual(['interrupted']);
  // Once more, after the sweep: the same answer, and still nothing runs.
  expect(await call(b, `/api/agents/${agent}/tool-calls`, request, { 'Idempotency-Key': 'chaos-1' })).toMatchObject({
    status: 409,
    body: { code: 'interrupted' },
  });
  expect(await effects('kill-mid-tool')).toBe(1);
  await kill(b);
});

test('when an instance is killed while a run waits between model steps, then its tool ran once with its record, the run ends interrupted, and the redelivered message runs nothing', async () => {
  fake.requests.length = 0;
  fake.script((_req, i) => (i === 0 ? toolCalls([['effect', JSON.stringify({ label: 'kill-between' })]]) : 'hang'));
  const a = await startService();
  const message = { message: { from: 'kill-between@acme.com', message_id: '<kill-between@acme.com>', body: 'Do the thing.' } };
  void call(a, `/api/agents/${agent}/messages`, message).catch(() => undefined);
  await until(
    'the second model step to be asked',
    async () => fake.requests.length,
    (n) => n >= 2,
  );
  expect(await effects('kill-between')).toBe(1);
  await kill(a);

  fake.script(() => completion('This must never be asked.'));
  const b = await startService();
  const redelivered = await until(
    'the redelivery to be answered',
    () => call(b, `/api/agents/${agent}/messages`, message),
    (r) => r.body.code !== 'message_id_in_flight',
  );
  expect(redelivered).toMatchObject({ status: 200, body: { stopped: 'interrupted' } });
  await settled();
  expect(await effects('kill-between')).toBe(1);
  expect(await records('kill-between@acme.com')).toEqual(['success']);
  const [run] = await sql.query<{ stopped: string }>(`SELECT stopped FROM agent_runs WHERE routing_key = 'kill-between@acme.com'`, {
    type: QueryTypes.SELECT,
  });
  expect(run).toEqual({ stopped: 'interrupted' });
  expect(fake.requests).toHaveLength(2);
  await kill(b);
});

test('when PostgreSQL restarts in the middle of a run, then its tool ran once, the run ends with an answer that says what ran, and the retry with the same Message-ID runs nothing', async () => {
  let answerStep: (answer: FakeAnswer) => void = () => undefined;
  fake.requests.length = 0;
  fake.script((_req, i) =>
    i === 0
      ? toolCalls([['effect', JSON.stringify({ label: 'pg-restart' })]])
      : new Promise<FakeAnswer>((resolve) => (answerStep = resolve)),
  );
  const a = await startService();
  const message = { message: { from: 'pg-restart@acme.com', message_id: '<pg-restart@acme.com>', body: 'Do the thing.' } };
  const first = call(a, `/api/agents/${agent}/messages`, message);
  await until(
    'the second model step to be asked',
    async () => fake.requests.length,
    (n) => n >= 2,
  );
  await pg.stop();
  await pg.start();
  answerStep(completion('Done. — Chaos'));
  const answered = await first;
  // The tool ran: the answer says so, whatever became of the run's record (never a 5xx).
  expect(answered.status).toBe(200);
  expect(answered.body.steps).toEqual([expect.objectContaining({ tool: 'effect', status: 'success' })]);
  expect(['reply', 'error']).toContain(answered.body.stopped);
  const retry = await until(
    'the retry to be answered',
    () => call(a, `/api/agents/${agent}/messages`, message),
    (r) => r.status === 200,
  );
  expect(retry.body.run_id).toBe(answered.body.run_id);
  await settled();
  expect(await effects('pg-restart')).toBe(1);
  expect(await records('pg-restart@acme.com')).toEqual(['success']);
  expect(await openRuns()).toBe(0);
  await kill(a);
});
