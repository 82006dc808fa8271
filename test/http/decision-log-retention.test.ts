// The decision log follows the retention (SEMANTICS §16): entries older than it go, oldest first in
// the log's order, and the horizon moves past them. A reader from the start reads the entries kept,
// each once; a reader whose cursor lies before the horizon is told so (410 cursor_expired, with
// where the log starts now), never given a gap as if it were the whole log; and a read the trimming
// overtakes midway is cut off.
import { QueryTypes } from 'sequelize';
import request from 'supertest';
import { decodeCursor } from '../../src/core/decision-cursor';
import { Instances } from '../../src/db/instances';
import { CursorExpiredError } from '../../src/errors';
import { Sweeper } from '../../src/run/sweeper';
import { readDecisionLog, trimDecisionLog } from '../../src/services/decision-log';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent } from '../support/factories';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

let t: TestApp;
let agent: number;

interface Line {
  id: number;
  cursor: string;
}

beforeAll(async () => {
  t = await createTestApp({ metricsToken: METRICS_TOKEN });
  agent = await makeAgent(t, { name: 'Ledger', toolkit_ids: [] });
});
afterAll(() => t.close());

const decisions = (query: string) =>
  request(t.app).get(`/api/decisions${query}`).set('Authorization', `Bearer ${METRICS_TOKEN}`).buffer(true);

async function read(after: string | null, limit = 1000): Promise<{ lines: Line[]; cursor: string }> {
  const res = await decisions(`?limit=${limit}${after === null ? '' : `&after=${after}`}`).expect(200);
  const lines =
    res.text === ''
      ? []
      : res.text
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line) as Line);
  return { lines, cursor: res.headers['toolgate-cursor'] as string };
}

async function readAll(after: string | null, limit: number): Promise<number[]> {
  const ids: number[] = [];
  let cursor = after;
  for (;;) {
    const page = await read(cursor, limit);
    ids.push(...page.lines.map((l) => l.id));
    if (page.lines.length === 0) return ids;
    cursor = page.cursor;
  }
}

/** `n` denied records, one transaction each: their ids in order. */
async function records(n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const [row] = await t.sequelize.query<{ id: string }>(
      `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms)
       VALUES (:agent, 'lookup_order', 'lookup_order', 'denied', 'sender', 'jane@acme.com', 0) RETURNING id`,
      { replacements: { agent }, type: QueryTypes.SELECT },
    );
    ids.push(Number(row!.id));
  }
  return ids;
}

/** Makes the entries of these records look logged `days` ago. */
const age = (ids: number[], days: number) =>
  t.sequelize.query(`UPDATE decision_log SET logged_at = now() - :days * interval '1 day' WHERE tool_call_id IN (:ids)`, {
    replacements: { ids, days },
  });

describe('when the retention trims the log', () => {
  let old: number[];
  let young: number[];
  let earlyCursor: string;
  let removed: number;

  beforeAll(async () => {
    old = await records(6);
    young = await records(4);
    await age(old, 100);
    // A reader that read the first two entries, before the trimming.
    earlyCursor = (await read(null, 2)).cursor;
    removed = await trimDecisionLog(t.sequelize, 90, 4);
  });

  test('then the entries older than the retention are gone, in batches, and the young ones stay', async () => {
    expect(removed).toBe(old.length);
    const [left] = await t.sequelize.query<{ n: string }>(`SELECT count(*) AS n FROM decision_log WHERE tool_call_id IN (:old)`, {
      replacements: { old },
      type: QueryTypes.SELECT,
    });
    expect(left).toEqual({ n: '0' });
  });

  test('then a reader from the start reads every entry kept exactly once, in order, across small reads', async () => {
    expect(await readAll(null, 3)).toEqual(young);
  });

  test('then a cursor from before the horizon is a 410 cursor_expired that gives where the log starts, and reading on from there reads the kept entries once', async () => {
    const res = await decisions(`?after=${earlyCursor}`).expect(410);
    expect(res.body).toMatchObject({ code: 'cursor_expired', loc: ['query', 'after'] });
    expect(res.body.detail).toContain('TOOLGATE_RETENTION');
    expect(decodeCursor(res.body.start as string)).not.toBeNull();
    expect(await readAll(res.body.start as string, 2)).toEqual(young);
  });

  test('then the cursor of a read that ended just at the horizon reads on with no refusal', async () => {
    const start = (await decisions(`?after=${earlyCursor}`).expect(410)).body.start as string;
    const res = await decisions(`?after=${start}&limit=1`).expect(200);
    expect(JSON.parse(res.text.trimEnd()).id).toBe(young[0]);
  });
});

test('when an entry not yet old lies before old ones, then the trimming stops at it, so the horizon stays a position', async () => {
  const [first, second, third] = (await records(3)) as [number, number, number];
  await t.sequelize.query(`UPDATE decision_log SET logged_at = now() - interval '100 days' WHERE tool_call_id <> :second`, {
    replacements: { second },
  });
  expect(await trimDecisionLog(t.sequelize, 90)).toBeGreaterThan(0);
  const kept = await readAll(null, 100);
  expect(kept).toEqual([second, third]);
  expect(kept).not.toContain(first);
});

test('when the trimming overtakes a read midway, then the read is cut off rather than passing over what went', async () => {
  const ids = await records(6);
  await age(ids, 100);
  await t.sequelize.query(`UPDATE decision_log SET logged_at = now() - interval '100 days'`);
  const open = await readDecisionLog(t.sequelize, null, 1000, 2);
  const batches = open.batches();
  expect((await batches.next()).done).toBe(false);
  await trimDecisionLog(t.sequelize, 90);
  await expect(batches.next()).rejects.toBeInstanceOf(CursorExpiredError);
});

test('when the sweeper runs with a retention, then it trims the log with the partitions', async () => {
  const ids = await records(2);
  await age(ids, 100);
  const sweeper = new Sweeper(t.sequelize, new Instances(t.sequelize, { heartbeatMs: 60_000, staleAfterMs: 30_000 }), {
    intervalMs: 60_000,
    graceMs: 1_000,
    inFlight: { records: () => [], runs: () => [] },
    retention: { keepDays: 90, partitions: 'month' },
  });
  const result = await sweeper.partitions();
  expect(result.logEntriesRemoved).toBe(2);
});
