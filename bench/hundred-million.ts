// `npm run bench:100m` (issue 33): the tool-call table at 100,000,000 records on the server DATABASE_URL
// names (docs/PERFORMANCE.md, "At 100 million records"). Generates the records in SQL, a monthly
// partition at a time over the 24 months before this one, on a database of its own, and 1,000,000
// the same way on a second, small one; then times on both what the size could slow down.
// BENCH_KEEP=1 keeps both databases, and a later run reuses what they hold (a month is generated once).
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { QueryTypes, type Sequelize } from 'sequelize';
import { senderAsGiven } from '../middleware/sender-check';
import { createSequelize } from '../src/db/connect';
import { ensureDatabase, withClient, withDatabase } from '../src/db/database-url';
import { migrateUp } from '../src/db/migrate';
import { quoteIdent } from '../src/db/quote-ident';
import { createToolgate } from '../src/toolgate';
import { LOG_START } from '../src/core/decision-cursor';
import { encodeCursor } from '../src/core/page-cursor';
import { dropExpiredPartitions } from '../src/db/partitions';
import { readDecisionLog } from '../src/services/decision-log';
import { completeToolCall, pageToolCalls, startToolCall } from '../src/services/tool-calls';
import { SCOOP_TOOLS } from '../src/app/demo/scoop-tools';
import { agentPages, fillAgents, median, RUNS } from './agent-page-timings';
import { percentiles, type Percentiles } from './percentiles';
import { withPostgresServer } from './postgres-server';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000_000);
const SMALL_RECORDS = 1_000_000;
const MONTHS = 24;
const AGENTS = Number(process.env.BENCH_AGENTS ?? 1_000_000);
/**
 * The agents the calls go to, by the generator's arithmetic on the record's number g: 30% of the calls
 * (g % 10 < 3) to 30 of the first BUSY agents (those whose id - 1 ends in 0, 8 or 9: a million
 * records each at 100M), the rest to the 7,000 of the first CALLING_AGENTS whose id - 1 ends in 3
 * to 7 (about 10,000 each). The other agents have no records, as most of a million agents would not.
 */
const CALLING_AGENTS = 10_000;
const BUSY = 100;
const SENDERS = 100_000;
/** An agent of the 7,000 (its id - 1 ends in 3). */
const TYPICAL = 5004;
/** Past this, the bench stops before generating (the disk is shared). */
const MAX_BYTES = 45 * 2 ** 30;
const KEEP = process.env.BENCH_KEEP === '1';
/** BENCH_DB names the two databases otherwise (a trial of the bench at a smaller BENCH_RECORDS, say). */
const BIG_DB = process.env.BENCH_DB ?? 'toolgate_bench_100m';
const SMALL_DB = `${BIG_DB}_small`;

const TOOLS = ['lookup_order', 'process_refund', 'send_reply', 'search_docs', 'create_task', 'escalate', 'update_address', 'cancel_order'];

const seconds = (from: number) => ((performance.now() - from) / 1000).toFixed(1);
const gb = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GB`;

function uptime(): string {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`;
  }
}

async function one<T extends object>(sequelize: Sequelize, sql: string, bind: unknown[] = []): Promise<T> {
  return (await sequelize.query<T>(sql, { bind, type: QueryTypes.SELECT }))[0]!;
}

/** The records' partitions and indexes, in bytes. */
async function tableSize(sequelize: Sequelize): Promise<{ heap: number; indexes: number; total: number }> {
  const row = await one<{ heap: string; indexes: string; total: string }>(
    sequelize,
    `SELECT coalesce(sum(pg_table_size(p.partition)), 0)::text AS heap, coalesce(sum(pg_indexes_size(p.partition)), 0)::text AS indexes,
            coalesce(sum(pg_total_relation_size(p.partition)), 0)::text AS total FROM toolgate_partitions('tool_calls') p`,
  );
  return { heap: Number(row.heap), indexes: Number(row.indexes), total: Number(row.total) };
}

/** The 24 months before this one, oldest first, with their partitions' names once made. */
async function months(sequelize: Sequelize): Promise<{ name: string; lo: Date; hi: Date }[]> {
  return sequelize.query<{ name: string; lo: Date; hi: Date }>(
    `SELECT c.relname AS name, p.lo, p.hi FROM toolgate_partitions('tool_calls') p JOIN pg_class c ON c.oid = p.partition
      WHERE p.lo >= date_trunc('month', now(), 'UTC') - interval '${MONTHS} months' AND p.hi <= date_trunc('month', now(), 'UTC')
      ORDER BY p.lo`,
    { type: QueryTypes.SELECT },
  );
}

/**
 * A month's records, ids contiguous from `base` and times evenly through the month, so that ids
 * and times grow together as dispatch writes them. Statuses in the proportions a busy agent's log
 * shows; the decision's fields set (policy version, dispatch, a refusal's reason); run keys shared by
 * the three calls of a run; executions with the instance and deadline they were started with.
 */
function monthSql(partition: string, base: number, rows: number, lo: Date, hi: Date): string {
  const tools = `(ARRAY[${TOOLS.map((t) => `'${t}'`).join(', ')}])[1 + (g % ${TOOLS.length})::integer]`;
  return `
    INSERT INTO ${quoteIdent(partition)} (id, agent_id, tool_id, tool_name, status, run, routing_key, duration_ms, error,
                            instance_id, deadline_at, policy_version, reason, dispatch, run_key, created_at)
    SELECT ${base} + g,
           CASE WHEN g % 10 < 3 THEN 1 + (g * 7919) % ${BUSY} ELSE 1 + (g * 104729) % ${CALLING_AGENTS} END,
           ${tools}, ${tools}, s.status,
           CASE WHEN g % 10 = 9 THEN 'scheduled' ELSE 'sender' END,
           CASE WHEN g % 10 = 9 THEN NULL ELSE 'sender' || ((g * 31337) % ${SENDERS}) || '@example.com' END,
           CASE WHEN s.status IN ('success', 'failure') THEN (g * 13) % 2000 ELSE 0 END,
           CASE s.status WHEN 'failure' THEN 'The order service timed out.' WHEN 'denied' THEN 'Not offered to this run.'
                         WHEN 'interrupted' THEN 'Its instance stopped before the call ended.' END,
           CASE WHEN s.status IN ('success', 'failure', 'interrupted') THEN 'bench' END,
           CASE WHEN s.status IN ('success', 'failure', 'interrupted') THEN t.at + interval '90 seconds' END,
           1 + (g % 7),
           CASE WHEN s.status = 'denied' THEN (ARRAY['not_offered', 'access_rules', 'cap_exceeded'])[1 + (g % 3)::integer] END,
           CASE WHEN s.status = 'pending_approval' THEN 'call' WHEN g % 20 = 0 THEN 'step' ELSE 'call' END,
           ('00000000-0000-4000-8000-' || lpad(to_hex((${base} + g) / 3), 12, '0'))::uuid,
           t.at
      FROM generate_series(1::bigint, ${rows}) g,
           LATERAL (SELECT CASE WHEN g % 100 < 80 THEN 'success' WHEN g % 100 < 85 THEN 'failure' WHEN g % 100 < 95 THEN 'denied'
                                WHEN g % 100 < 98 THEN 'skipped' WHEN g % 100 < 99 THEN 'pending_approval' ELSE 'interrupted' END AS status) s,
           LATERAL (SELECT '${lo.toISOString()}'::timestamptz + (g - 1) * ('${hi.toISOString()}'::timestamptz - '${lo.toISOString()}'::timestamptz) / ${rows} AS at) t`;
}

/** The records table's indexes and keys, kept aside while a bulk load runs without them. */
async function saveIndexes(sequelize: Sequelize): Promise<void> {
  await sequelize.query(`
    CREATE TABLE IF NOT EXISTS bench_saved_ddl (ord serial, name text PRIMARY KEY, drop_sql text NOT NULL, create_sql text NOT NULL);
    INSERT INTO bench_saved_ddl (name, drop_sql, create_sql)
      SELECT conname, format('ALTER TABLE tool_calls DROP CONSTRAINT %I', conname), format('ALTER TABLE tool_calls ADD CONSTRAINT %I %s', conname, pg_get_constraintdef(oid))
        FROM pg_constraint WHERE conrelid = 'tool_calls'::regclass AND contype IN ('p', 'f')
      UNION ALL
      SELECT c.relname, format('DROP INDEX %I', c.relname), replace(pg_get_indexdef(c.oid), ' ON ONLY ', ' ON ')
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       WHERE i.indrelid = 'tool_calls'::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = c.oid)
    ON CONFLICT (name) DO NOTHING;`);
}

async function dropIndexes(sequelize: Sequelize): Promise<void> {
  await saveIndexes(sequelize);
  const saved = await sequelize.query<{ name: string; drop_sql: string }>(`SELECT name, drop_sql FROM bench_saved_ddl ORDER BY ord DESC`, {
    type: QueryTypes.SELECT,
  });
  for (const s of saved) if (await present(sequelize, s.name)) await sequelize.query(s.drop_sql);
}

async function present(sequelize: Sequelize, name: string): Promise<boolean> {
  const row = await one<{ n: number }>(
    sequelize,
    `SELECT ((SELECT count(*) FROM pg_constraint WHERE conrelid = 'tool_calls'::regclass AND conname = $1) +
             (SELECT count(*) FROM pg_class WHERE relname = $1 AND relkind IN ('i', 'I')))::integer AS n`,
    [name],
  );
  return row.n > 0;
}

/** Builds back what dropIndexes took, each printed with the time it took. */
async function restoreIndexes(sequelize: Sequelize, log: (line: string) => void): Promise<void> {
  if ((await one<{ t: string | null }>(sequelize, `SELECT to_regclass('bench_saved_ddl')::text AS t`)).t === null) return;
  const saved = await sequelize.query<{ name: string; create_sql: string }>(`SELECT name, create_sql FROM bench_saved_ddl ORDER BY ord`, {
    type: QueryTypes.SELECT,
  });
  for (const s of saved) {
    if (await present(sequelize, s.name)) continue;
    const started = performance.now();
    // Settings for this build alone (SET LOCAL), so no connection of the pool keeps them for the measurements.
    await sequelize.transaction(async (transaction) => {
      await sequelize.query(`SET LOCAL maintenance_work_mem = '512MB'; SET LOCAL max_parallel_maintenance_workers = 1`, { transaction });
      await sequelize.query(s.create_sql, { transaction });
    });
    log(`  built ${s.name} in ${seconds(started)} s`);
  }
}

interface Generated {
  records: number;
  seconds: number | null;
}

/**
 * Migrates the database and fills it: `agents` agents (the pages bench's), and `records` tool-call
 * records over the 24 months before this one, a partition at a time. The decision log's triggers
 * are off while the records are written (they would write as many entries): the bench measures the
 * record table at its size. Months already generated (bench_months) are left as they are.
 */
async function generate(sequelize: Sequelize, label: string, records: number, agents: number): Promise<Generated> {
  const log = (line: string) => console.log(`[${label}] ${line}`);
  await migrateUp(sequelize);
  await sequelize.query(`CREATE TABLE IF NOT EXISTS bench_months (partition text PRIMARY KEY, rows bigint NOT NULL)`);
  // What a run stopped during the index builds left unbuilt.
  await restoreIndexes(sequelize, log);
  const { n: agentCount } = await one<{ n: number }>(sequelize, `SELECT count(*)::integer AS n FROM agents`);
  const started = performance.now();
  if (agentCount < agents) {
    const tg = createToolgate({ sequelize, tools: SCOOP_TOOLS, senderCheck: senderAsGiven });
    try {
      await tg.syncSystemToolkits();
    } finally {
      await tg.close();
    }
    await fillAgents(sequelize, agents);
    for (const table of ['agents', 'agent_toolkits', 'agent_access_rules']) await sequelize.query(`VACUUM ANALYZE ${table}`);
    log(`${agents.toLocaleString('en')} agents in ${seconds(started)} s`);
  }
  // A month a retention drop took (the bench's last step) is generated again.
  await sequelize.query(`DELETE FROM bench_months b WHERE to_regclass(b.partition) IS NULL`);
  // The legacy partition (everything before next month) goes, for months of their own.
  const legacy = await one<{ t: string | null }>(sequelize, `SELECT to_regclass('tool_calls_legacy')::text AS t`);
  if (legacy.t !== null) await sequelize.query(`ALTER TABLE tool_calls DETACH PARTITION tool_calls_legacy; DROP TABLE tool_calls_legacy`);
  await sequelize.query(
    `SELECT toolgate_make_partitions('tool_calls', date_trunc('month', now(), 'UTC') - interval '${MONTHS} months', now() + interval '2 months', 'month')`,
  );
  const all = await months(sequelize);
  if (all.length !== MONTHS) throw new Error(`expected ${MONTHS} months of partitions, found ${all.length}`);
  const done = new Map(
    (
      await sequelize.query<{ partition: string; rows: string }>(`SELECT partition, rows::text AS rows FROM bench_months`, {
        type: QueryTypes.SELECT,
      })
    ).map((r) => [r.partition, Number(r.rows)]),
  );
  const perMonth = (i: number) => Math.floor(records / MONTHS) + (i === MONTHS - 1 ? records % MONTHS : 0);
  const todo = all.map((m, i) => ({ ...m, i })).filter((m) => done.get(m.name) !== perMonth(m.i));
  if (todo.length === 0) {
    log(`${records.toLocaleString('en')} records already there: generation skipped`);
    return { records, seconds: null };
  }
  // Many months: written without the indexes, which are built once at the end (much faster than row by row).
  const bulk = todo.length > 2;
  if (bulk) {
    log(`${todo.length} months to write: indexes and keys set aside until they are`);
    await dropIndexes(sequelize);
  }
  log(`decision-log triggers off for the load (ALTER TABLE tool_calls DISABLE TRIGGER USER)`);
  await sequelize.query(`ALTER TABLE tool_calls DISABLE TRIGGER USER`);
  try {
    for (const m of todo) {
      const base = all.slice(0, m.i).reduce((sum, _, j) => sum + perMonth(j), 0);
      const rows = perMonth(m.i);
      const t = performance.now();
      await sequelize.transaction(async (transaction) => {
        await sequelize.query(`SET LOCAL synchronous_commit = off; TRUNCATE ${quoteIdent(m.name)}`, { transaction });
        await sequelize.query(monthSql(m.name, base, rows, m.lo, m.hi), { transaction });
        await sequelize.query(
          `INSERT INTO bench_months (partition, rows) VALUES ($1, $2) ON CONFLICT (partition) DO UPDATE SET rows = EXCLUDED.rows`,
          { bind: [m.name, rows], transaction },
        );
      });
      const secs = (performance.now() - t) / 1000;
      log(
        `${m.name}: ${rows.toLocaleString('en')} records in ${secs.toFixed(1)} s (${Math.round(rows / secs).toLocaleString('en')}/s), ` +
          `${todo.indexOf(m) + 1} of ${todo.length}; ${os.loadavg()[0]!.toFixed(2)} load`,
      );
    }
  } finally {
    await sequelize.query(`ALTER TABLE tool_calls ENABLE TRIGGER USER`);
    log(`decision-log triggers back on`);
  }
  await restoreIndexes(sequelize, log);
  const { max } = await one<{ max: string }>(sequelize, `SELECT max(id)::text AS max FROM tool_calls`);
  await sequelize.query(`SELECT setval('tool_calls_id_seq', $1::bigint)`, { bind: [max] });
  const v = performance.now();
  if (bulk) await sequelize.query(`VACUUM ANALYZE tool_calls`);
  else for (const m of todo) await sequelize.query(`VACUUM ANALYZE ${quoteIdent(m.name)}`);
  log(`VACUUM ANALYZE in ${seconds(v)} s`);
  // The load's pages written out now rather than by a checkpoint in the middle of the timings (a
  // superuser's or pg_checkpoint's statement: without the right, the timings may meet that checkpoint).
  const c = performance.now();
  await sequelize.query('CHECKPOINT').then(
    () => log(`CHECKPOINT in ${seconds(c)} s`),
    () => log("CHECKPOINT refused: the timings may meet the load's checkpoint"),
  );
  const secs = (performance.now() - started) / 1000;
  const size = await tableSize(sequelize);
  log(
    `generated in ${secs.toFixed(1)} s; tool_calls: ${gb(size.total)} (${gb(size.heap)} table, ${gb(size.indexes)} indexes), ` +
      `${Math.round(size.total / records)} bytes a record with its indexes`,
  );
  return { records, seconds: secs };
}

async function main(): Promise<void> {
  console.log(`bench:100m: ${os.cpus().length} CPUs; uptime at the start: ${uptime()}`);
  await withPostgresServer(async (adminUrl) => {
    for (const name of [SMALL_DB, BIG_DB]) await ensureDatabase(adminUrl, name);
    const small = createSequelize(withDatabase(adminUrl, SMALL_DB), { queryTimeoutMs: 0 });
    const big = createSequelize(withDatabase(adminUrl, BIG_DB), { queryTimeoutMs: 0 });
    try {
      const { version } = await one<{ version: string }>(big, `SELECT current_setting('server_version') AS version`);
      console.log(`PostgreSQL ${version}`);
      await generate(small, '1M', SMALL_RECORDS, CALLING_AGENTS);
      // What the large one will take, from what the small one took a record.
      const perRecord = (await tableSize(small)).total / SMALL_RECORDS;
      const estimate = perRecord * RECORDS;
      console.log(`estimate at ${RECORDS.toLocaleString('en')} records: ${gb(estimate)} (limit ${gb(MAX_BYTES)})`);
      if (estimate > MAX_BYTES) throw new Error(`${gb(estimate)} would not fit: stopped before generating`);
      await generate(big, '100M', RECORDS, AGENTS);
      if (process.env.BENCH_GENERATE_ONLY === '1') return;
      await measure(small, big);
    } finally {
      await small.close();
      await big.close();
      if (!KEEP) {
        for (const name of [BIG_DB, SMALL_DB])
          await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
        console.log(`databases dropped (BENCH_KEEP=1 keeps them)`);
      }
      console.log(`uptime at the end: ${uptime()}`);
    }
  });
}

const BLOCK = 250;
const CALLS = 2_000;
const WARM = 200;
const PAGE_READS = 200;
/** The decision log's entries generated for the newest records (the load wrote none), and how many a read takes. */
const SLICE = 1_000_000;
const READ = 250_000;

const f3 = (n: number) => n.toFixed(3);

interface Spread extends Percentiles {
  p25: number;
  p75: number;
}

function spread(samples: readonly number[]): Spread {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  return { ...percentiles(samples), p25: at(25), p75: at(75) };
}

/** A call as dispatch records it: its `started` record, then its completion, for a busy agent. */
async function recordOne(sequelize: Sequelize): Promise<number> {
  const started = performance.now();
  const id = await startToolCall(
    sequelize,
    {
      agent_id: 1,
      tool_id: 'process_refund',
      tool_name: 'process_refund',
      run: 'sender',
      routing_key: 'sender1@example.com',
      dispatch: 'call',
      policy_version: 1,
    },
    { instance_id: 'bench', deadline_ms: 90_000 },
  );
  await completeToolCall(sequelize, id!, { status: 'success', duration_ms: 1, error: null });
  return performance.now() - started;
}

/** Recording on both databases in blocks that take turns, so a change in the machine's load falls on both alike. */
async function recording(small: Sequelize, big: Sequelize): Promise<void> {
  for (let i = 0; i < WARM; i++) {
    await recordOne(small);
    await recordOne(big);
  }
  const times = { small: [] as number[], big: [] as number[] };
  for (let block = 0; block < (2 * CALLS) / BLOCK; block++) {
    const which = block % 2 === 0 ? 'small' : 'big';
    for (let i = 0; i < BLOCK; i++) times[which].push(await recordOne(which === 'small' ? small : big));
  }
  const a = spread(times.small);
  const b = spread(times.big);
  const line = (label: string, s: Spread) =>
    `  ${label.padEnd(16)} p50 ${f3(s.p50)} ms   p25–p75 ${f3(s.p25)}–${f3(s.p75)} ms   p95 ${f3(s.p95)} ms   p99 ${f3(s.p99)} ms`;
  console.log(
    `\nrecording a call (started, then completed, decision log on), ${CALLS} one at a time on each, blocks of ${BLOCK} taking turns`,
  );
  console.log(line('1M records', a));
  console.log(line('100M records', b));
  const overlap = a.p25 <= b.p75 && b.p25 <= a.p75;
  console.log(
    `  target: unchanged within noise: the middle halves ${overlap ? 'overlap' : 'do not overlap'}; p50 ${b.p50 >= a.p50 ? '+' : ''}${f3(b.p50 - a.p50)} ms at 100M`,
  );
}

async function timed(n: number, run: (i: number) => Promise<unknown>): Promise<Percentiles> {
  for (let i = 0; i < 10; i++) await run(i);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await run(i);
    times.push(performance.now() - started);
  }
  return percentiles(times);
}

/** GET /agents/:id/tool-calls as the route reads it (pageToolCalls), newest first, 100 a page. */
async function newest100(label: string, sequelize: Sequelize): Promise<void> {
  const busy = await one<{ n: string; mid: string }>(
    sequelize,
    `SELECT (SELECT count(*) FROM tool_calls WHERE agent_id = 1)::text AS n,
            (SELECT id FROM tool_calls WHERE agent_id = 1 ORDER BY id DESC OFFSET (SELECT count(*) / 2 FROM tool_calls WHERE agent_id = 1) LIMIT 1)::text AS mid`,
  );
  const typical = await one<{ n: string }>(sequelize, `SELECT count(*)::text AS n FROM tool_calls WHERE agent_id = ${TYPICAL}`);
  const halfway = encodeCursor([Number(busy.mid)]);
  // Agents with records that no other read asks for, a different one each read (985 of them): their
  // pages are in no cache the earlier reads filled.
  const other = (i: number) => 10 * (11 + ((i * 37) % 985)) + 4 + (i % 5);
  const rows: [string, () => Promise<Percentiles>][] = [
    [
      `busy agent (${Number(busy.n).toLocaleString('en')} records), newest 100`,
      () => timed(PAGE_READS, () => pageToolCalls(sequelize, 1, { limit: 100 })),
    ],
    [`busy agent, 100 halfway down`, () => timed(PAGE_READS, () => pageToolCalls(sequelize, 1, { limit: 100, after: halfway }))],
    [
      `busy agent, ?status=denied, newest 100`,
      () => timed(PAGE_READS, () => pageToolCalls(sequelize, 1, { limit: 100, status: 'denied' })),
    ],
    [
      `typical agent (${Number(typical.n).toLocaleString('en')} records), newest 100`,
      () => timed(PAGE_READS, () => pageToolCalls(sequelize, TYPICAL, { limit: 100 })),
    ],
    [`a different agent each read, newest 100`, () => timed(PAGE_READS, (i) => pageToolCalls(sequelize, other(i), { limit: 100 }))],
  ];
  console.log(
    `\nthe newest 100 of an agent (pageToolCalls, as GET /agents/:id/tool-calls), ${label}, ${PAGE_READS} reads each; target: under 50 ms`,
  );
  for (const [name, run] of rows) {
    const p = await run();
    console.log(`  ${name.padEnd(52)} p50 ${f3(p.p50).padStart(8)} ms   p99 ${f3(p.p99).padStart(8)} ms`);
  }
}

/** The decision log's entries for the newest SLICE generated records (ids 1 to `records`), which the load (its triggers off) did not write; once. */
async function decisionLogSlice(sequelize: Sequelize, label: string, records: number): Promise<void> {
  await sequelize.query(`CREATE TABLE IF NOT EXISTS bench_state (what text PRIMARY KEY)`);
  const found = await one<{ n: number }>(sequelize, `SELECT count(*)::integer AS n FROM bench_state WHERE what = 'decision log slice'`);
  if (found.n > 0) return;
  const started = performance.now();
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `INSERT INTO decision_log (tool_call_id, event)
       SELECT id, CASE status WHEN 'success' THEN 'completed' WHEN 'failure' THEN 'completed' WHEN 'interrupted' THEN 'interrupted' ELSE 'decided' END
         FROM tool_calls WHERE id > ${records - SLICE} AND id <= ${records} AND status <> 'started' ORDER BY id;
       INSERT INTO bench_state (what) VALUES ('decision log slice');`,
      { transaction },
    );
  });
  await sequelize.query(`VACUUM ANALYZE decision_log`);
  console.log(
    `[${label}] decision log: entries for the newest ${SLICE.toLocaleString('en')} generated records written in SQL in ${seconds(started)} s`,
  );
}

/** The export's read: READ entries through readDecisionLog, each line serialized as GET /decisions writes it. */
async function exportRead(label: string, sequelize: Sequelize): Promise<void> {
  const started = performance.now();
  const read = await readDecisionLog(sequelize, LOG_START, READ);
  let lines = 0;
  let bytes = 0;
  for await (const batch of read.batches()) {
    lines += batch.length;
    bytes += Buffer.byteLength(batch.map((value) => `${JSON.stringify(value)}\n`).join(''));
  }
  const secs = (performance.now() - started) / 1000;
  console.log(
    `  ${label.padEnd(14)} ${lines.toLocaleString('en')} entries (${(bytes / 2 ** 20).toFixed(1)} MB) in ${secs.toFixed(2)} s: ` +
      `${Math.round(lines / secs).toLocaleString('en')} records/s`,
  );
}

/** dropExpiredPartitions with the retention that lets the oldest month go, and that month alone. */
async function retentionDrop(sequelize: Sequelize): Promise<void> {
  const oldest = await one<{ name: string; rows: string; size: string; keep: number }>(
    sequelize,
    `SELECT c.relname AS name, (SELECT count(*) FROM tool_calls t WHERE t.tableoid = p.partition)::text AS rows,
            pg_size_pretty(pg_total_relation_size(p.partition)) AS size,
            floor(extract(epoch FROM now() - p.hi) / 86400)::integer AS keep
       FROM toolgate_partitions('tool_calls') p JOIN pg_class c ON c.oid = p.partition ORDER BY p.hi LIMIT 1`,
  );
  // Untimed: what goes at any retention (cap_hits' partitions past every window), so it is not in the figure.
  await dropExpiredPartitions(sequelize, null);
  const started = performance.now();
  const result = await dropExpiredPartitions(sequelize, oldest.keep);
  const ms = performance.now() - started;
  console.log(
    `\na retention drop: dropExpiredPartitions with ${oldest.keep} days kept, on 100M records; dropped ${result.dropped.join(', ') || 'nothing'}`,
  );
  if (result.kept.length > 0) console.log(`  kept: ${result.kept.map((k) => `${k.partition} (${k.holds})`).join(', ')}`);
  console.log(
    `  ${oldest.name}: ${Number(oldest.rows).toLocaleString('en')} records, ${oldest.size} with its indexes: ${ms.toFixed(1)} ms (target: under 1000 ms)`,
  );
  // A detach that had to wait is finished, and a detached table's files removed, by the sweep after.
  const next = performance.now();
  const after = await dropExpiredPartitions(sequelize, oldest.keep);
  console.log(
    `  the next sweep (finishes what the drop left: ${after.dropped.join(', ') || 'nothing left'}): ${(performance.now() - next).toFixed(1)} ms`,
  );
}

async function measure(small: Sequelize, big: Sequelize): Promise<void> {
  await decisionLogSlice(small, '1M', SMALL_RECORDS);
  await decisionLogSlice(big, '100M', RECORDS);
  console.log(`\nmeasuring; ${uptime()}`);
  await recording(small, big);
  await newest100('1M records', small);
  await newest100('100M records', big);
  console.log(
    `\nthe export's read rate (readDecisionLog from the start, ${READ.toLocaleString('en')} entries, lines as GET /decisions writes them)`,
  );
  await exportRead('1M records', small);
  await exportRead('100M records', big);

  const tg = createToolgate({ sequelize: big, tools: SCOOP_TOOLS, senderCheck: senderAsGiven });
  try {
    console.log(
      `\nthe agents pages at ${AGENTS.toLocaleString('en')} agents (bench:pages' pages), on the 100M database; median of ${RUNS}; target: under 50 ms`,
    );
    for (const [name, run] of await agentPages(big, tg, AGENTS)) console.log(`  ${name.padEnd(62)} ${(await median(run)).padStart(10)}`);
  } finally {
    await tg.close();
  }
  // Last: it takes a month away, which a later run with BENCH_KEEP=1 generates again.
  await retentionDrop(big);
  console.log(`\n${uptime()}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
