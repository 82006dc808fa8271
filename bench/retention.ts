// `npm run bench:retention`: what a retention costs, and what recording a call costs once the
// records are partitioned (docs/PERFORMANCE.md, "Retention").
// - The drop: a month of tool-call records (BENCH_ROWS, default 1,000,000) dropped by the sweeper's
//   retention, against the target of under 1 s whatever the partition holds; then a month of runs
//   (BENCH_RUNS, default 100,000, each with its Message-ID), whose keys go a batch at a time first.
// - Recording a call (a started record, then its completion) on a table holding BENCH_ROWS records,
//   plain (before the partitioning migration) and partitioned into 13 months, p50 and p95 of 2,000.
// - A drop step by step, for each size in BENCH_RETENTION_RECORDS (default 1,000,000), with a writer
//   recording a call every few ms: the detach and its wait, the DROP and its COMMIT, by hand as the
//   table whole and as its indexes first; then the sweep's own, when the rows left tool_calls and
//   when it was done. BENCH_RETENTION_STEPS_ONLY=1 runs only this.
// Uses DATABASE_URL when set, else a throwaway embedded PostgreSQL (fsync off unless BENCH_DURABLE=1).
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createSequelize } from '../src/db/connect';
import { migrateDown, migrateUp } from '../src/db/migrate';
import { dedicatedClient } from '../src/db/dedicated-client';
import type { PgClient } from '../src/db/connect';
import { dropExpiredPartitions } from '../src/db/partitions';
import { completeToolCall, startToolCall } from '../src/services/tool-calls';
import { withBenchDatabase } from './postgres-server';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 100_000);
/** The sizes of the oldest month whose drop is timed step by step, with a writer going on meanwhile. */
const SIZES = (process.env.BENCH_RETENTION_RECORDS ?? '1000000')
  .split(',')
  .map((v) => Number(v.trim()))
  .filter((v) => Number.isInteger(v) && v > 0);
/** How often the concurrent writer records a call while a drop runs. */
const WRITER_EVERY_MS = 5;
/** BENCH_RETENTION_STEPS_ONLY=1: only the step-by-step drops (for sizes whose fill takes long). */
const STEPS_ONLY = process.env.BENCH_RETENTION_STEPS_ONLY === '1';
const CALLS = 2_000;
const TABLES = ['tool_calls', 'agent_runs', 'cap_hits'];

const ms = (from: number) => performance.now() - from;
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function one<T extends object>(sequelize: Sequelize, sql: string): Promise<T> {
  return (await sequelize.query<T>(sql, { type: QueryTypes.SELECT }))[0]!;
}

/** A year of monthly partitions, this month's and two ahead, in place of the table as it was partitioned. */
async function aYearOfPartitions(sequelize: Sequelize): Promise<void> {
  for (const table of TABLES) {
    await sequelize.query(`ALTER TABLE ${table} DETACH PARTITION ${table}_legacy; DROP TABLE ${table}_legacy;
      SELECT toolgate_make_partitions('${table}', now() - interval '12 months', now() + interval '2 months', 'month')`);
  }
}

/** ROWS records, spread over the twelve months before this one. */
async function fillRecords(sequelize: Sequelize, months: string): Promise<void> {
  await sequelize.query(`
    INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, created_at)
    SELECT 1, 'process_refund', 'process_refund', 'success', 'sender', 'mara@thescoop.com', g % 100,
           date_trunc('month', now(), 'UTC') - interval '1 second' - (g % ${months}) * interval '1 hour'
      FROM generate_series(1, ${ROWS}) g;
    ANALYZE tool_calls;`);
}

async function recordCalls(sequelize: Sequelize): Promise<{ p50: number; p95: number }> {
  const times: number[] = [];
  for (let i = 0; i < CALLS + 200; i++) {
    const started = performance.now();
    const id = await startToolCall(
      sequelize,
      { agent_id: 1, tool_id: 'process_refund', tool_name: 'process_refund', run: 'sender', routing_key: 'mara@thescoop.com' },
      { instance_id: 'bench', deadline_ms: 90_000 },
    );
    await completeToolCall(sequelize, id!, { status: 'success', duration_ms: 1, error: null });
    if (i >= 200) times.push(ms(started));
  }
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p95: quantile(times, 0.95) };
}

/** The oldest of a year's months filled with `rows` records; its name and size. */
async function fillOldestMonth(sequelize: Sequelize, rows: number): Promise<{ name: string; size: string }> {
  await sequelize.query(`TRUNCATE tool_calls;
    SELECT toolgate_make_partitions('tool_calls', now() - interval '12 months', now() + interval '2 months', 'month')`);
  await sequelize.query(`
    INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, created_at)
    SELECT 1, 'process_refund', 'process_refund', 'success', 'sender', 'mara@thescoop.com', g % 100,
           date_trunc('month', now(), 'UTC') - interval '12 months' + (g % 600) * interval '1 hour'
      FROM generate_series(1, ${rows}) g;
    ANALYZE tool_calls; CHECKPOINT;`);
  return one<{ name: string; size: string }>(
    sequelize,
    `SELECT p.partition::text AS name, pg_size_pretty(pg_total_relation_size(p.partition)) AS size
       FROM toolgate_partitions('tool_calls') p ORDER BY p.hi LIMIT 1`,
  );
}

/**
 * A writer of tool_calls on its own connection, one record every WRITER_EVERY_MS: the longest it
 * waited for an insert while each step ran (the step is the one under way when the insert began).
 */
function startWriter(client: PgClient): { step(name: string): void; stop(): Promise<Map<string, number>> } {
  const longest = new Map<string, number>();
  let step = 'idle';
  let running = true;
  const loop = (async () => {
    while (running) {
      const at = step;
      const started = performance.now();
      await client.query(
        `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms) VALUES (1, 'lookup', 'lookup', 'success', 'sender', 'w@thescoop.com', 1)`,
      );
      longest.set(at, Math.max(longest.get(at) ?? 0, ms(started)));
      await new Promise((r) => setTimeout(r, WRITER_EVERY_MS));
    }
  })();
  return {
    step: (name) => {
      step = name;
    },
    stop: async () => {
      running = false;
      await loop;
      return longest;
    },
  };
}

/** Polls how long a backend spends waiting on a lock (the detach's wait for older snapshots). */
function startLockWaitPoller(client: PgClient, pid: number): { stop(): Promise<number> } {
  let waited = 0;
  let running = true;
  const loop = (async () => {
    let last = performance.now();
    while (running) {
      const r = await client.query<{ w: string | null }>(`SELECT wait_event_type AS w FROM pg_stat_activity WHERE pid = $1`, [pid]);
      const now = performance.now();
      if (r.rows[0]?.w === 'Lock') waited += now - last;
      last = now;
      await new Promise((res) => setTimeout(res, 1));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return waited;
    },
  };
}

/**
 * One drop of a month of `rows` records, timed step by step by hand as the sweep runs them: the
 * detach (its wait for older snapshots, and the rest), then the detached table's removal, each
 * statement and each COMMIT apart. Then the same month again, dropped by the sweep itself.
 */
async function timedDrop(sequelize: Sequelize, rows: number): Promise<void> {
  const writerClient = dedicatedClient(sequelize, { application_name: 'bench writer' });
  const detacher = dedicatedClient(sequelize, { application_name: 'bench detach' });
  const poller = dedicatedClient(sequelize, { application_name: 'bench poller' });
  await Promise.all([writerClient.connect(), detacher.connect(), poller.connect()]);
  try {
    let month = await fillOldestMonth(sequelize, rows);
    console.log(`
a month of ${rows.toLocaleString('en')} records (${month.name}, ${month.size}), with a writer recording a call every ${WRITER_EVERY_MS} ms`);
    const pid = (await detacher.query<{ pid: number }>(`SELECT pg_backend_pid() AS pid`)).rows[0]!.pid;
    // A constraint's index goes with its constraint.
    const indexDrops = (table: string) =>
      detacher
        .query<{ sql: string }>(
          `SELECT coalesce('ALTER TABLE ' || $1 || ' DROP CONSTRAINT ' || quote_ident(c.conname), 'DROP INDEX ' || i.indexrelid::regclass::text) AS sql
             FROM pg_index i LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.conrelid = i.indrelid
            WHERE i.indrelid = $1::regclass ORDER BY 1`,
          [table],
        )
        .then((r) => r.rows.map((row) => row.sql));
    let writer = startWriter(writerClient);
    const step = async (name: string, sql: string): Promise<number> => {
      writer.step(name);
      const started = performance.now();
      await detacher.query(sql);
      const took = ms(started);
      writer.step('between');
      return took;
    };
    await new Promise((r) => setTimeout(r, 100));
    const waits = startLockWaitPoller(poller, pid);
    const detachStarted = performance.now();
    const detachMs = await step('detach', `ALTER TABLE tool_calls DETACH PARTITION ${month.name} CONCURRENTLY`);
    const rowsGoneMs = ms(detachStarted);
    const waitMs = await waits.stop();
    // As the sweep does now: one transaction, the table dropped whole.
    await step('begin', 'BEGIN');
    const lockMs = await step('lock', `LOCK TABLE ${month.name} IN ACCESS EXCLUSIVE MODE`);
    const dropMs = await step('drop', `DROP TABLE ${month.name}`);
    const commitMs = await step('commit', 'COMMIT');
    const filesGoneMs = ms(detachStarted);
    await new Promise((r) => setTimeout(r, 100));
    let longest = await writer.stop();
    const w = (k: string) => (longest.get(k) ?? 0).toFixed(1);
    console.log(`  by hand, the table dropped whole in one transaction:`);
    console.log(
      `    DETACH CONCURRENTLY   ${detachMs.toFixed(1)} ms (of which waiting for older snapshots ~${waitMs.toFixed(1)} ms)   writer's longest insert ${w('detach')} ms`,
    );
    console.log(`    LOCK (detached table) ${lockMs.toFixed(1)} ms   writer ${w('lock')} ms`);
    console.log(`    DROP TABLE            ${dropMs.toFixed(1)} ms   writer ${w('drop')} ms`);
    console.log(`    its COMMIT            ${commitMs.toFixed(1)} ms   writer ${w('commit')} ms`);
    console.log(`    writer before and between the steps: ${w('idle')} ms, ${w('between')} ms`);
    console.log(`    rows gone from tool_calls ${rowsGoneMs.toFixed(1)} ms after the start, files gone ${filesGoneMs.toFixed(1)} ms`);

    // The same, the detached table's indexes dropped first, each in its own transaction.
    month = await fillOldestMonth(sequelize, rows);
    writer = startWriter(writerClient);
    await new Promise((r) => setTimeout(r, 100));
    const second = performance.now();
    const detach2Ms = await step('detach', `ALTER TABLE tool_calls DETACH PARTITION ${month.name} CONCURRENTLY`);
    const rowsGone2Ms = ms(second);
    const commits: number[] = [];
    const indexes = await indexDrops(month.name);
    for (const sql of indexes) {
      await step('begin', 'BEGIN');
      await step('drop', sql);
      commits.push(await step('commit', 'COMMIT'));
    }
    await step('begin', 'BEGIN');
    await step('drop', `DROP TABLE ${month.name}`);
    const tableCommitMs = await step('commit', 'COMMIT');
    const filesGone2Ms = ms(second);
    longest = await writer.stop();
    console.log(`  by hand, its ${indexes.length} indexes dropped first, one per transaction, then the table:`);
    console.log(
      `    DETACH CONCURRENTLY ${detach2Ms.toFixed(1)} ms; the indexes' COMMITs ${commits.map((c) => c.toFixed(1)).join(', ')} ms; the table's COMMIT ${tableCommitMs.toFixed(1)} ms`,
    );
    console.log(`    writer's longest insert: detach ${w('detach')} ms, DROPs ${w('drop')} ms, COMMITs ${w('commit')} ms`);
    console.log(
      `    rows gone from tool_calls ${rowsGone2Ms.toFixed(1)} ms after the start, files gone ${filesGone2Ms.toFixed(1)} ms; longest transaction ${Math.max(...commits, tableCommitMs).toFixed(1)} ms of COMMIT`,
    );

    // The sweep itself, on the same month: the other tables' old partitions go first, untimed.
    await dropExpiredPartitions(sequelize, 330);
    month = await fillOldestMonth(sequelize, rows);
    writer = startWriter(writerClient);
    await new Promise((r) => setTimeout(r, 100));
    writer.step('sweep');
    const third = performance.now();
    // When the month's rows left tool_calls: the moment its detach is done.
    let rowsGoneAt = Number.NaN;
    const watching = (async () => {
      while (Number.isNaN(rowsGoneAt)) {
        const r = await poller.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_inherits WHERE inhrelid = to_regclass($1) AND NOT inhdetachpending`,
          [month.name],
        );
        if (r.rows[0]?.n === '0') rowsGoneAt = ms(third);
        else await new Promise((res) => setTimeout(res, 1));
      }
    })();
    const swept = await dropExpiredPartitions(sequelize, 330);
    const sweepMs = ms(third);
    await watching;
    longest = await writer.stop();
    console.log(`  the sweep (dropExpiredPartitions), dropping ${swept.dropped.join(', ')}:`);
    console.log(
      `    rows gone from tool_calls ${rowsGoneAt.toFixed(1)} ms after the sweep began, files gone (the sweep done) ${sweepMs.toFixed(1)} ms; writer's longest insert ${w('sweep')} ms (target: rows gone under 1000 ms)`,
    );
  } finally {
    await Promise.all([writerClient.end(), detacher.end(), poller.end()].map((p) => p.catch(() => undefined)));
  }
}

async function main(): Promise<void> {
  console.log(
    `bench:retention: ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, ${ROWS.toLocaleString('en')} records, ${RUNS.toLocaleString('en')} runs`,
  );
  await withBenchDatabase('retention', async (url) => {
    // Filling a million rows takes longer than a request's 5 s.
    const sequelize = createSequelize(url, { queryTimeoutMs: 0 });
    try {
      await migrateUp(sequelize);
      const { version } = await one<{ version: string }>(sequelize, `SELECT current_setting('server_version') AS version`);
      console.log(`PostgreSQL ${version}`);
      await sequelize.query(
        `INSERT INTO agents (id, name) VALUES (1, 'Sundae'); INSERT INTO threads (id, agent_id, reference) VALUES (1, 1, 'thr_1')`,
      );
      if (STEPS_ONLY) {
        await aYearOfPartitions(sequelize);
        for (const rows of SIZES) await timedDrop(sequelize, rows);
        return;
      }

      // Recording a call, plain.
      await migrateDown(sequelize, { step: 1 });
      await fillRecords(sequelize, String(12 * 30 * 24));
      const plain = await recordCalls(sequelize);
      await sequelize.query(`TRUNCATE tool_calls`);
      await migrateUp(sequelize);

      // Recording a call, partitioned: the same records over twelve months' partitions.
      await aYearOfPartitions(sequelize);
      await fillRecords(sequelize, String(12 * 30 * 24));
      const partitioned = await recordCalls(sequelize);
      const { n } = await one<{ n: string }>(sequelize, `SELECT count(*) AS n FROM toolgate_partitions('tool_calls')`);
      console.log(`\nrecording a call (started, then completed), ${CALLS} calls, ${ROWS.toLocaleString('en')} records in the table`);
      console.log(`  plain table               p50 ${plain.p50.toFixed(3)} ms   p95 ${plain.p95.toFixed(3)} ms`);
      console.log(`  partitioned (${n} months)   p50 ${partitioned.p50.toFixed(3)} ms   p95 ${partitioned.p95.toFixed(3)} ms`);

      // The drop: every record in the oldest month.
      await sequelize.query(`TRUNCATE tool_calls`);
      await sequelize.query(`
        INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, created_at)
        SELECT 1, 'process_refund', 'process_refund', 'success', 'sender', 'mara@thescoop.com', g % 100,
               date_trunc('month', now(), 'UTC') - interval '12 months' + (g % 600) * interval '1 hour'
          FROM generate_series(1, ${ROWS}) g;
        ANALYZE tool_calls;`);
      const oldest = await one<{ name: string; rows: string; size: string }>(
        sequelize,
        `SELECT p.partition::text AS name, (SELECT count(*) FROM tool_calls t WHERE t.tableoid = p.partition)::text AS rows,
                pg_size_pretty(pg_total_relation_size(p.partition)) AS size
           FROM toolgate_partitions('tool_calls') p ORDER BY p.hi LIMIT 1`,
      );
      // Untimed: cap_hits' partitions, which hold no call here, go at any retention; so they are not in the figure.
      await dropExpiredPartitions(sequelize, null);
      const keep = 330;
      let started = performance.now();
      const records = await dropExpiredPartitions(sequelize, keep);
      const recordsMs = ms(started);
      console.log(`\nretention of ${keep} days, dropping ${records.dropped.join(', ')}`);
      console.log(
        `  ${oldest.name}: ${Number(oldest.rows).toLocaleString('en')} records, ${oldest.size}: dropped in ${recordsMs.toFixed(1)} ms (target: under 1000 ms)`,
      );

      // A month of runs, each with its Message-ID: their keys go a batch at a time, then the partition.
      await sequelize.query(`
        INSERT INTO agent_runs (agent_id, thread_id, run, message, tools_offered, created_at, completed_at, stopped)
        SELECT 1, 1, 'sender', '{}', '{}', date_trunc('month', now(), 'UTC') - interval '11 months' + (g % 600) * interval '1 hour',
               date_trunc('month', now(), 'UTC') - interval '11 months' + (g % 600) * interval '1 hour', 'reply'
          FROM generate_series(1, ${RUNS}) g;
        INSERT INTO agent_message_ids (agent_id, message_id, thread_id, run_id, origin)
        SELECT 1, '<' || id || '@thescoop.com>', 1, id, 'inbound' FROM agent_runs;
        ANALYZE agent_runs; ANALYZE agent_run_keys; ANALYZE agent_message_ids;`);
      started = performance.now();
      const runs = await dropExpiredPartitions(sequelize, keep - 31);
      const runsMs = ms(started);
      const left = await one<{ keys: string; ids: string }>(
        sequelize,
        `SELECT (SELECT count(*) FROM agent_run_keys)::text AS keys, (SELECT count(*) FROM agent_message_ids)::text AS ids`,
      );
      console.log(`retention of ${keep - 31} days, dropping ${runs.dropped.join(', ')}`);
      console.log(
        `  ${RUNS.toLocaleString('en')} runs and their Message-IDs: keys deleted and partitions dropped in ${runsMs.toFixed(1)} ms (keys left ${left.keys}, Message-IDs left ${left.ids})`,
      );

      for (const rows of SIZES) await timedDrop(sequelize, rows);
    } finally {
      await sequelize.close();
    }
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
