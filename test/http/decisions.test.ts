// GET /api/decisions: the decision log as NDJSON from a cursor (SEMANTICS §16). Each record is given
// once it has its decision or outcome, once, oldest first; the Toolgate-Cursor header reads on; and
// records committed out of their id order (24 writers, the lowest id held open longest) are all
// given, none twice, across many small reads, where reading on by id would skip one.
import { Client } from 'pg';
import { QueryTypes } from 'sequelize';
import request from 'supertest';
import { encodeCursor } from '../../src/core/decision-cursor';
import { CLIENT_TOKEN, SCHEDULER_TOKEN, createTestApp, type TestApp } from '../support/app';
import { createSundae, type Sundae } from '../support/scoop';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

let t: TestApp;
let sundae: Sundae;

beforeAll(async () => {
  t = await createTestApp({ metricsToken: METRICS_TOKEN });
  sundae = await createSundae(t, 'gate');
});
afterAll(() => t.close());

interface Line {
  id: number;
  agent_id: number;
  tool_id: string;
  status: string;
  duration_ms: number;
  routing_key: string | null;
  event: string;
  logged_at: string;
  cursor: string;
}

const decisions = (query = '', token = METRICS_TOKEN) =>
  request(t.app).get(`/api/decisions${query}`).set('Authorization', `Bearer ${token}`).set('Accept', 'application/x-ndjson');

/** One read: its lines and the cursor to read on from. */
async function read(after: string | null, limit = 1000): Promise<{ lines: Line[]; cursor: string }> {
  const query = `?limit=${limit}${after === null ? '' : `&after=${after}`}`;
  const res = await decisions(query).buffer(true).expect(200);
  const body = res.text;
  return {
    lines:
      body === ''
        ? []
        : body
            .trimEnd()
            .split('\n')
            .map((line) => JSON.parse(line) as Line),
    cursor: res.headers['toolgate-cursor'] as string,
  };
}

/** Reads until a read gives nothing new: every line, and where the log ends now. */
async function readToEnd(after: string | null, limit = 1000): Promise<{ lines: Line[]; cursor: string }> {
  const lines: Line[] = [];
  let cursor = after;
  for (;;) {
    const page = await read(cursor, limit);
    lines.push(...page.lines);
    if (page.lines.length === 0 && page.cursor === cursor) return { lines, cursor: page.cursor };
    cursor = page.cursor;
  }
}

const dispatch = (tool: string, sender: string) =>
  t
    .client()
    .post(`/api/agents/${sundae.id}/tool-calls`)
    .send({ tool, input: { order_id: 'SCP-1042' }, sender });

/** A record written straight into tool_calls, as another writer's would be. */
const RECORD = `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms)
  VALUES ($1, 'lookup_order', 'lookup_order', $2, 'sender', $3, 0) RETURNING id`;

describe('when the log is asked for', () => {
  test('then without a token it is a 401', async () => {
    const res = await request(t.app).get('/api/decisions').expect(401);
    expect(res.body.code).toBe('unauthenticated');
  });

  test('then the metrics token reads it, as NDJSON with a cursor to read on from', async () => {
    const res = await decisions().expect(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers['toolgate-cursor']).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  test('then the admin token reads it too', async () => {
    await decisions('', 'admin-token-0123456789abcdef').expect(200);
  });

  test("then a client's key and the scheduler's token are refused with a 403", async () => {
    expect((await decisions('', CLIENT_TOKEN).expect(403)).body.code).toBe('forbidden');
    expect((await decisions('', SCHEDULER_TOKEN).expect(403)).body.code).toBe('forbidden');
  });
});

describe('when calls are dispatched', () => {
  test('then each record is given once, with its final status, its agent and its event, oldest first', async () => {
    const { cursor: start } = await readToEnd(null);
    await dispatch('process_refund', 'jane@acme.com').expect(403);
    await dispatch('lookup_order', 'jane@acme.com').expect(200);
    await dispatch('process_refund', 'mara@thescoop.com').expect(200);
    const { lines } = await readToEnd(start);
    expect(lines.map((l) => [l.tool_id, l.status, l.event, l.routing_key])).toEqual([
      ['process_refund', 'denied', 'decided', 'jane@acme.com'],
      ['lookup_order', 'success', 'completed', 'jane@acme.com'],
      ['process_refund', 'success', 'completed', 'mara@thescoop.com'],
    ]);
    expect(lines.every((l) => l.agent_id === sundae.id)).toBe(true);
    const records = (await t.admin().get(`/api/agents/${sundae.id}/tool-calls?limit=3`).expect(200)).body as Record<string, unknown>[];
    // The record as GET /agents/:id/tool-calls gives it, and the entry's own fields beside.
    for (const line of lines) {
      const { agent_id: _agent, event: _event, logged_at, cursor: _cursor, ...record } = line;
      expect(Date.parse(logged_at)).not.toBeNaN();
      expect(record).toEqual(records.find((r) => r.id === line.id));
    }
  });

  test('then a read from the cursor it gave gives nothing more, and gives that cursor back', async () => {
    const { cursor } = await readToEnd(null);
    expect(await read(cursor)).toEqual({ lines: [], cursor });
  });

  test('then an execution still running is not in the log, and is once, when it ends', async () => {
    const { cursor: start } = await readToEnd(null);
    const [started] = (await t.sequelize.query(RECORD, { bind: [sundae.id, 'started', 'omar@example.org'] }))[0] as { id: string }[];
    expect((await readToEnd(start)).lines).toEqual([]);
    await t.sequelize.query(`UPDATE tool_calls SET status = 'success', duration_ms = 12 WHERE id = $1`, { bind: [started!.id] });
    // Written again after it ended (a column of its own), it is not logged again.
    await t.sequelize.query(`UPDATE tool_calls SET error = 'noted' WHERE id = $1`, { bind: [started!.id] });
    const { lines } = await readToEnd(start);
    expect(lines.map((l) => [l.id, l.status, l.event, l.duration_ms])).toEqual([[Number(started!.id), 'success', 'completed', 12]]);
  });

  test('then a record the sweeper closes as interrupted is logged as interrupted', async () => {
    const { cursor: start } = await readToEnd(null);
    const [started] = (await t.sequelize.query(RECORD, { bind: [sundae.id, 'started', null] }))[0] as { id: string }[];
    await t.sequelize.query(`UPDATE tool_calls SET status = 'interrupted', error = 'interrupted' WHERE id = $1`, { bind: [started!.id] });
    const { lines } = await readToEnd(start);
    expect(lines.map((l) => [l.id, l.event])).toEqual([[Number(started!.id), 'interrupted']]);
  });
});

describe('when the log is read a few lines at a time', () => {
  test('then each read gives at most limit lines, and the cursor of its last line', async () => {
    const { cursor: start } = await readToEnd(null);
    for (const sender of ['a@acme.com', 'b@acme.com', 'c@acme.com']) await dispatch('process_refund', sender).expect(403);
    const first = await read(start, 2);
    expect(first.lines.map((l) => l.routing_key)).toEqual(['a@acme.com', 'b@acme.com']);
    expect(first.cursor).toBe(first.lines[1]!.cursor);
    const second = await read(first.cursor, 2);
    expect(second.lines.map((l) => l.routing_key)).toEqual(['c@acme.com']);
  });

  test('then a read whose entries cross a power of ten within one transaction gives them all, in order', async () => {
    const { cursor: start } = await readToEnd(null);
    // Positions 99,995 to 100,004, written by one transaction.
    await t.sequelize.query('ALTER TABLE decision_log ALTER COLUMN position RESTART WITH 99995');
    await t.sequelize.transaction(async (transaction) => {
      for (let i = 0; i < 10; i++) await t.sequelize.query(RECORD, { bind: [sundae.id, 'denied', `p${i}@acme.com`], transaction });
    });
    const page = await read(start, 10);
    expect(page.lines.map((l) => l.routing_key)).toEqual(Array.from({ length: 10 }, (_, i) => `p${i}@acme.com`));
    expect(page.cursor).toBe(page.lines[9]!.cursor);
  });

  test("then a read from a line's own cursor goes on after that line", async () => {
    const { cursor: start } = await readToEnd(null);
    for (const sender of ['d@acme.com', 'e@acme.com']) await dispatch('process_refund', sender).expect(403);
    const { lines } = await read(start);
    expect((await read(lines[0]!.cursor)).lines.map((l) => l.routing_key)).toEqual(['e@acme.com']);
  });
});

describe('when the query is not one the log reads', () => {
  test.each([
    ['not base64url', 'not a cursor!'],
    ['made up', Buffer.from('hello').toString('base64url')],
    ['a position past a bigint', encodeCursor({ xact: '1', position: '9223372036854775808' })],
    ['a number with a leading zero', Buffer.from('v1:01:2').toString('base64url')],
  ])('then an after cursor %s is a 422 invalid_cursor', async (_name, after) => {
    const res = await decisions(`?after=${encodeURIComponent(after)}`).expect(422);
    expect(res.body).toMatchObject({ code: 'invalid_cursor', loc: ['query', 'after'], detail: expect.stringContaining('Toolgate-Cursor') });
  });

  test('then an after cursor longer than any cursor is a 422 before it is decoded', async () => {
    const res = await decisions(`?after=${'A'.repeat(10_000)}`).expect(422);
    expect(res.body.code).toBe('validation_error');
  });

  test.each(['0', '100001', 'ten', '1.5'])('then limit=%s is a 422 naming the parameter', async (limit) => {
    const res = await decisions(`?limit=${limit}`).expect(422);
    expect(res.body).toMatchObject({ code: 'validation_error', detail: [expect.objectContaining({ loc: ['query', 'limit'] })] });
  });
});

describe('when 24 writers commit out of their id order while the log is read', () => {
  const WRITERS = 24;
  const ROUNDS = 8;

  test('then many small reads give every record exactly once, where reading on by id skips one', async () => {
    const { cursor: start } = await readToEnd(null);
    const clients = await Promise.all(
      Array.from({ length: WRITERS + 1 }, async () => {
        const client = new Client({ connectionString: t.databaseUrl });
        await client.connect();
        return client;
      }),
    );
    const [held, ...writers] = clients as [Client, ...Client[]];
    try {
      // The lowest id of all, in a transaction held open until a reader by id has passed it.
      await held.query('BEGIN');
      const heldId = Number((await held.query<{ id: string }>(RECORD, [sundae.id, 'denied', 'held@acme.com'])).rows[0]!.id);
      const written: number[] = [heldId];
      const committed: number[] = [];
      let writing = true;

      // A reader that goes on from the highest id it has seen, as a naive export would.
      const byId = new Set<number>();
      const naive = (async () => {
        let last = heldId - 1;
        while (writing || byId.size < written.length) {
          const rows = await t.sequelize.query<{ id: string }>(
            `SELECT id FROM tool_calls WHERE id > $1 AND status <> 'started' ORDER BY id`,
            { bind: [last], type: QueryTypes.SELECT },
          );
          for (const { id } of rows) byId.add(Number(id));
          if (rows.length > 0) last = Number(rows[rows.length - 1]!.id);
          if (!writing) break;
          await new Promise((r) => setTimeout(r, 5));
        }
      })();

      // The log's reader: small reads, over and over, while everything is written.
      const given: number[] = [];
      let reads = 0;
      const reader = (async () => {
        let cursor = start;
        for (;;) {
          const done = !writing;
          const page = await read(cursor, 7);
          reads += 1;
          given.push(...page.lines.map((l) => l.id));
          cursor = page.cursor;
          if (done && page.lines.length === 0) return;
        }
      })();

      // Each writer's rounds: a refusal, or an execution started in one transaction and ended in
      // another, each transaction held open a while so that commits land in no order of their ids.
      const pause = () => new Promise((r) => setTimeout(r, Math.floor(Math.random() * 25)));
      await Promise.all(
        writers.map(async (client, w) => {
          for (let round = 0; round < ROUNDS; round++) {
            await client.query('BEGIN');
            const status = (w + round) % 2 === 0 ? 'denied' : 'started';
            const id = Number((await client.query<{ id: string }>(RECORD, [sundae.id, status, `w${w}r${round}@acme.com`])).rows[0]!.id);
            written.push(id);
            await pause();
            await client.query('COMMIT');
            if (status === 'started') {
              await client.query('BEGIN');
              await client.query(`UPDATE tool_calls SET status = 'success' WHERE id = $1`, [id]);
              await client.query('SELECT pg_sleep($1)', [Math.random() / 50]);
              await client.query('COMMIT');
            }
            committed.push(id);
          }
        }),
      );
      // The reader by id has moved past the held record before it commits.
      while (!byId.has(Math.max(...written))) await new Promise((r) => setTimeout(r, 5));
      await held.query('COMMIT');
      committed.push(heldId);
      writing = false;
      await Promise.all([reader, naive]);

      expect(committed).not.toEqual([...committed].sort((a, b) => a - b));
      expect(byId.has(heldId)).toBe(false);
      expect(reads).toBeGreaterThan(written.length / 7);
      expect(given.length).toBe(written.length);
      expect([...given].sort((a, b) => a - b)).toEqual([...written].sort((a, b) => a - b));
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  }, 120_000);
});
