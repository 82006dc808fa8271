// GET /api/decisions of 50,000 records in one read: written as the client takes it. A client that
// stops reading stops the log's reading after a few batches; the heap grows by a batch, not by the
// answer; and /healthz is answered throughout, so the loop is never held for the read.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import request from 'supertest';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent } from '../support/factories';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const RECORDS = 50_000;
/** The lines a read of the service fetches from the database at once (HTTP.md). */
const BATCH = 1000;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let t: TestApp;
let server: http.Server;
let port: number;

beforeAll(async () => {
  t = await createTestApp({ metricsToken: METRICS_TOKEN });
  const agent = await makeAgent(t, { name: 'Sundae', toolkit_ids: [] });
  // Refusals with an error text of 300 characters each, a few thousand a statement: an answer of some 20 MB.
  for (let from = 1; from <= RECORDS; from += 5000) {
    await t.sequelize.query(
      `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, error)
       SELECT $1::integer, 'process_refund', 'process_refund', 'denied', 'sender', 'sender' || g || '@acme.com', 0, repeat('Not offered. ', 23)
         FROM generate_series($2::integer, $2::integer + 4999) g`,
      { bind: [agent, from] },
    );
  }
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as AddressInfo).port;
}, 120_000);
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

/** Counts the batch queries the service sends until restored (keeping none of their rows, as a spy's record would). */
function countBatches(): { count(): number; restore(): void } {
  const query = t.sequelize.query;
  let batches = 0;
  t.sequelize.query = function countedQuery(this: unknown, ...args: Parameters<typeof query>) {
    if (typeof args[0] === 'string' && args[0].includes('LEFT JOIN tool_calls')) batches += 1;
    return query.apply(this, args);
  } as typeof query;
  return { count: () => batches, restore: () => void (t.sequelize.query = query) };
}

/** Opens a read of every record (or `limit`); the response, not yet read. */
function openRead(limit = RECORDS): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    http
      .get(
        { port, host: '127.0.0.1', path: `/api/decisions?limit=${limit}`, headers: { Authorization: `Bearer ${METRICS_TOKEN}` } },
        resolve,
      )
      .on('error', reject);
  });
}

/** Reads a response to its end, keeping only its line count and the previous line's id; `each` sees the count as it grows. */
function consume(res: http.IncomingMessage, each: (lines: number) => void = () => {}): Promise<{ lines: number; ordered: boolean }> {
  return new Promise((resolve, reject) => {
    let lines = 0;
    let rest = '';
    let last = 0;
    let ordered = true;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      for (const part of parts) {
        const id = (JSON.parse(part) as { id: number }).id;
        if (id <= last) ordered = false;
        last = id;
        lines += 1;
      }
      each(lines);
    });
    res.on('end', () => resolve({ lines, ordered }));
    res.on('error', reject);
    res.on('aborted', () => reject(new Error('aborted')));
    res.resume();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('when the client stops reading, then the service stops reading the log after a few batches, and goes on when the client does', async () => {
  const batches = countBatches();
  try {
    const res = await openRead();
    res.pause();
    await sleep(1500);
    const whilePaused = batches.count();
    const { lines, ordered } = await consume(res);
    console.log(`decision log, paused client: ${whilePaused} of ${batches.count()} batches read while it did not read`);
    expect(whilePaused).toBeLessThan(10);
    expect(batches.count()).toBe(RECORDS / BATCH);
    expect({ lines, ordered }).toEqual({ lines: RECORDS, ordered: true });
  } finally {
    batches.restore();
  }
}, 120_000);

test(`when ${RECORDS.toLocaleString('en')} records are read in one read, then the heap grows by less than 16 MB`, async () => {
  gc();
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  let next = 10_000;
  const res = await openRead();
  const started = Date.now();
  const { lines } = await consume(res, (count) => {
    if (count < next) return;
    next += 10_000;
    gc();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  });
  const grew = (peak - before) / 2 ** 20;
  console.log(
    `decision log, ${lines} lines in ${Date.now() - started} ms (with a full GC each 10,000): heap grew ${grew.toFixed(1)} MB at most`,
  );
  expect(lines).toBe(RECORDS);
  expect(grew).toBeLessThan(16);
}, 120_000);

test('when the records are read in one read, then /healthz is answered again and again while it streams', async () => {
  const probe = monitorEventLoopDelay({ resolution: 5 });
  probe.enable();
  const started = Date.now();
  let ended = false;
  const reading = openRead()
    .then((res) => consume(res))
    .finally(() => (ended = true));
  const answered: { status: number; ms: number; during: boolean }[] = [];
  while (!ended) {
    const asked = Date.now();
    const res = await request(t.app).get('/healthz');
    answered.push({ status: res.status, ms: Date.now() - asked, during: !ended });
    await sleep(200);
  }
  const { lines } = await reading;
  probe.disable();
  const during = answered.filter((a) => a.during);
  console.log(
    `decision log, ${lines} lines in ${Date.now() - started} ms: /healthz answered ${during.length} times meanwhile, in ${Math.max(...during.map((a) => a.ms))} ms at most; the event loop's longest delay ${Math.round(probe.max / 1e6)} ms (load average ${loadavg()[0]!.toFixed(1)})`,
  );
  expect(lines).toBe(RECORDS);
  expect(during.length).toBeGreaterThanOrEqual(3);
  expect(during.every((a) => a.status === 200)).toBe(true);
}, 180_000);

test('when the database fails after the first lines were sent, then the answer is cut off, never ended as if whole', async () => {
  const query = t.sequelize.query;
  let batches = 0;
  t.sequelize.query = function failingQuery(this: unknown, ...args: Parameters<typeof query>) {
    if (typeof args[0] === 'string' && args[0].includes('LEFT JOIN tool_calls') && ++batches === 2)
      return Promise.reject(new Error('connection terminated'));
    return query.apply(this, args);
  } as typeof query;
  try {
    const res = await openRead(3 * BATCH);
    expect(res.statusCode).toBe(200);
    const seen = { lines: 0 };
    const outcome = await consume(res, (lines) => (seen.lines = lines)).then(
      () => 'ended',
      () => 'cut off',
    );
    // What the first batch wrote may be cut too; nothing of a later one came, and the end never did.
    expect(outcome).toBe('cut off');
    expect(seen.lines).toBeLessThanOrEqual(BATCH);
  } finally {
    t.sequelize.query = query;
  }
});
