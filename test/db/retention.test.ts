// The retention (TOOLGATE_RETENTION): the sweeper drops whole partitions of records older than it,
// and keeps one that holds a started call, an open run or a pending approval; cap_hits' go once no
// call in them counts toward a cap. The database is arranged as one partitioned months ago would be:
// a partition for each month since (the old table, empty here, detached).
import { QueryTypes, type Sequelize } from 'sequelize';
import { Instances } from '../../src/db/instances';
import { Sweeper } from '../../src/run/sweeper';
import { createTestDatabase, type TestDatabase } from '../support/database';

let db: TestDatabase;
let sql: Sequelize;

const all = <T extends object>(query: string) => sql.query<T>(query, { type: QueryTypes.SELECT });
const sweeperKeeping = (keepDays: number | null) =>
  new Sweeper(sql, new Instances(sql, { heartbeatMs: 60_000, staleAfterMs: 30_000 }), {
    intervalMs: 60_000,
    graceMs: 1_000,
    inFlight: { records: () => [], runs: () => [] },
    retention: { keepDays, partitions: 'month' },
  });
const partitions = async (table: string) =>
  (await all<{ name: string }>(`SELECT partition::text AS name FROM toolgate_partitions('${table}') ORDER BY hi`)).map((p) => p.name);

// The month n months before this one (UTC).
const month = (n: number) => `date_trunc('month', now(), 'UTC') - interval '${n} months' + interval '9 days'`;

beforeAll(async () => {
  db = await createTestDatabase();
  sql = db.sequelize;
  for (const table of ['tool_calls', 'agent_runs', 'cap_hits']) {
    await sql.query(`ALTER TABLE ${table} DETACH PARTITION ${table}_legacy; DROP TABLE ${table}_legacy;
                     SELECT toolgate_make_partitions('${table}', now() - interval '8 months', now() + interval '2 months', 'month')`);
  }
  await sql.query(`
    INSERT INTO agents (id, name) VALUES (901, 'Finance');
    INSERT INTO threads (id, agent_id, subject, reference) VALUES (901, 901, 'Refunds', 'thr_901');
    -- Eight months ago: finished records and runs.
    INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, created_at)
      SELECT 901, 'process_refund', 'process_refund', 'success', 'sender', ${month(8)} + g * interval '1 hour' FROM generate_series(1, 50) g;
    INSERT INTO agent_runs (id, agent_id, thread_id, run, message, tools_offered, created_at, completed_at, stopped)
      VALUES (901, 901, 901, 'sender', '{}', '{}', ${month(8)}, ${month(8)}, 'reply');
    INSERT INTO agent_message_ids (agent_id, message_id, thread_id, run_id, origin) VALUES (901, '<old@thescoop.com>', 901, 901, 'inbound');
    -- Seven months ago: a call filed for approval, still pending; an open run.
    INSERT INTO approval_requests (id, agent_id, attachment_id, tool_id, input, input_digest, scope, run, routing_key, expires_at, code, created_at)
      VALUES (901, 901, 1, 'process_refund', '{}', repeat('a', 32), 'sender:mara@thescoop.com', 'sender', 'mara@thescoop.com', now() + interval '1 year', 'ABCDEF12', ${month(7)});
    INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, approval_request_id, created_at)
      VALUES (901, 'process_refund', 'process_refund', 'pending_approval', 'sender', 901, ${month(7)});
    INSERT INTO agent_runs (id, agent_id, run, message, tools_offered, created_at) VALUES (902, 901, 'scheduled', '{}', '{}', ${month(7)});
    -- Six months ago: a started call; a finished run that a pending request names.
    INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, created_at) VALUES (901, 'lookup', 'lookup', 'started', 'sender', ${month(6)});
    INSERT INTO agent_runs (id, agent_id, thread_id, run, message, tools_offered, created_at, completed_at, stopped)
      VALUES (903, 901, 901, 'sender', '{}', '{}', ${month(6)}, ${month(6)}, 'reply');
    INSERT INTO agent_message_ids (agent_id, message_id, thread_id, run_id, origin) VALUES (901, '<kept@thescoop.com>', 901, 903, 'inbound');
    INSERT INTO approval_requests (id, agent_id, attachment_id, tool_id, input, input_digest, scope, run, routing_key, thread_id, run_id, expires_at, code)
      VALUES (902, 901, 1, 'lookup', '{}', repeat('b', 32), 'thread:901', 'sender', 'mara@thescoop.com', 901, 903, now() + interval '1 year', 'ABCDEF13');
    -- Five months ago: finished.
    INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, created_at) VALUES (901, 'lookup', 'lookup', 'success', 'sender', ${month(5)});
    INSERT INTO agent_runs (id, agent_id, run, message, tools_offered, created_at, completed_at, stopped)
      VALUES (904, 901, 'scheduled', '{}', '{}', ${month(5)}, ${month(5)}, 'reply');
    -- A cap of 150 days: a call five months ago still counts, one seven months ago no longer.
    INSERT INTO cap_usage (id, cap_key, window_s, used, last_at) OVERRIDING SYSTEM VALUE VALUES (901, 'refunds|mara', 150 * 86400, 2, now());
    INSERT INTO cap_hits (usage_id, at) VALUES (901, ${month(7)}), (901, ${month(5)});
  `);
});
afterAll(() => db.drop());

describe('when the sweeper runs with a 90-day retention', () => {
  let result: Awaited<ReturnType<Sweeper['partitions']>>;
  let before: { tool_calls: string[]; agent_runs: string[]; cap_hits: string[] };

  beforeAll(async () => {
    before = {
      tool_calls: await partitions('tool_calls'),
      agent_runs: await partitions('agent_runs'),
      cap_hits: await partitions('cap_hits'),
    };
    result = await sweeperKeeping(90).partitions();
  });

  it('then the old partitions are dropped, records and all', async () => {
    expect(result.dropped).toEqual(
      expect.arrayContaining([before.tool_calls[0], before.tool_calls[3], before.agent_runs[0], before.agent_runs[3]]),
    );
    expect(result.dropped).not.toContain(before.tool_calls[5]);
    const [left] = await all<{ old: string; runs: string }>(
      `SELECT (SELECT count(*) FROM tool_calls WHERE status = 'success') AS old, (SELECT string_agg(id::text, ',' ORDER BY id) FROM agent_runs) AS runs`,
    );
    expect(left).toEqual({ old: '0', runs: '902,903' });
  });

  it('then the partition holding a pending approval is kept, and so is the one holding a started call', async () => {
    const kept = await partitions('tool_calls');
    expect(kept).toEqual(expect.arrayContaining([before.tool_calls[1], before.tool_calls[2]]));
    expect(result.kept).toEqual(
      expect.arrayContaining([
        { partition: before.tool_calls[1], holds: 'a pending approval' },
        { partition: before.tool_calls[2], holds: 'a started record' },
      ]),
    );
  });

  it('then the partition holding an open run is kept, and so is the one holding the run a pending request names', async () => {
    expect(result.kept).toEqual(
      expect.arrayContaining([
        { partition: before.agent_runs[1], holds: 'an open run' },
        { partition: before.agent_runs[2], holds: 'a pending approval' },
      ]),
    );
    const [request] = await all<{ run_id: number }>(`SELECT run_id FROM approval_requests WHERE id = 902`);
    expect(request).toEqual({ run_id: 903 });
  });

  it("then a dropped run's key and Message-ID go with it, and a kept run's stay", async () => {
    const ids = await all<{ message_id: string }>(`SELECT message_id FROM agent_message_ids WHERE agent_id = 901 ORDER BY message_id`);
    expect(ids).toEqual([{ message_id: '<kept@thescoop.com>' }]);
    const keys = await all<{ id: number }>(`SELECT id FROM agent_run_keys WHERE id >= 901 ORDER BY id`);
    expect(keys).toEqual([{ id: 902 }, { id: 903 }]);
  });

  it("then cap_hits' partitions go once no call in them counts toward a cap, and the one whose call still counts is kept", async () => {
    expect(result.dropped).toEqual(expect.arrayContaining([before.cap_hits[0], before.cap_hits[1]]));
    expect(await partitions('cap_hits')).toContain(before.cap_hits[3]);
    expect(await all(`SELECT usage_id FROM cap_hits`)).toEqual([{ usage_id: '901' }]);
  });

  it('then once the approval is decided and the run ends, the next sweep drops their partitions too', async () => {
    await sql.query(`UPDATE approval_requests SET status = 'denied', decided_at = now() WHERE id IN (901, 902);
                     UPDATE tool_calls SET status = 'interrupted' WHERE status = 'started';
                     UPDATE agent_runs SET completed_at = created_at, stopped = 'interrupted' WHERE id = 902`);
    const next = await sweeperKeeping(90).partitions();
    expect(next.dropped).toEqual(
      expect.arrayContaining([before.tool_calls[1], before.tool_calls[2], before.agent_runs[1], before.agent_runs[2]]),
    );
    expect(await all(`SELECT id FROM agent_runs`)).toEqual([]);
    const [request] = await all<{ run_id: number | null }>(`SELECT run_id FROM approval_requests WHERE id = 902`);
    expect(request).toEqual({ run_id: null });
  });
});

describe('when the sweeper runs with no retention', () => {
  it('then no partition of records is dropped, and the months ahead are made', async () => {
    const other = await createTestDatabase();
    try {
      const sweeper = new Sweeper(other.sequelize, new Instances(other.sequelize, { heartbeatMs: 60_000, staleAfterMs: 30_000 }), {
        intervalMs: 60_000,
        graceMs: 1_000,
        inFlight: { records: () => [], runs: () => [] },
      });
      await other.sequelize.query(`DROP TABLE tool_calls_p${nextMonthName()}`);
      const result = await sweeper.partitions();
      expect(result.dropped).toEqual([]);
      expect(result.made).toBe(1);
    } finally {
      await other.drop();
    }
  });
});

describe('when the partitions change from months to days', () => {
  it('then the days begin where the months end: no moment is left without a partition, and none has two', async () => {
    const other = await createTestDatabase();
    try {
      await other.sequelize.query(`SELECT toolgate_make_partitions('tool_calls', now(), now() + interval '100 days', 'day')`);
      const parts = await other.sequelize.query<{ name: string; lo: Date | null; hi: Date }>(
        `SELECT partition::text AS name, lo, hi FROM toolgate_partitions('tool_calls') ORDER BY hi`,
        { type: QueryTypes.SELECT },
      );
      for (let i = 1; i < parts.length; i++) expect(parts[i]!.lo).toEqual(parts[i - 1]!.hi);
      expect(parts.filter((p) => /_p\d{4}_\d{2}_\d{2}$/.test(p.name)).length).toBeGreaterThan(0);
      expect(parts.at(-1)!.hi.getTime()).toBeGreaterThanOrEqual(Date.now() + 99 * 86_400_000);
    } finally {
      await other.drop();
    }
  });
});

describe("when the host's database holds a table named as a partition would be", () => {
  it('then the retention leaves it alone: only the partitions of toolgate’s own tables are read and dropped', async () => {
    await sql.query(`CREATE TABLE tool_calls_p1999_01 (id integer); INSERT INTO tool_calls_p1999_01 VALUES (1)`);
    await sweeperKeeping(1).partitions();
    expect(await all(`SELECT id FROM tool_calls_p1999_01`)).toEqual([{ id: 1 }]);
  });
});

/** The month after this one's partition, as the sweeper names it (YYYY_MM, UTC). */
function nextMonthName(): string {
  const now = new Date();
  const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 2, 1));
  return `${next.getUTCFullYear()}_${String(next.getUTCMonth() + 1).padStart(2, '0')}`;
}
