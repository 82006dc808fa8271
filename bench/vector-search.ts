// `npm run bench:vectors`: what semantic search's nearest-chunks query costs for one agent with
// 10,000 and 100,000 embedded chunks, at 256 and 1536 dimensions (1536: text-embedding-3-small's
// default). Prints figures; never passes or fails.
//
// Each configuration starts from empty tables: one agent gets N chunks, nine others N between them
// (so that the agent filter matters), 20 chunks per document, each with a random unit vector written
// straight into document_chunks.embedding by SQL (uniform in [-1, 1] per dimension, then scaled to
// length 1), then ANALYZE. VectorSearch.nearest() is timed as the service calls it (top 10, and top
// 50: the depth hybrid search asks for): a few warm-up calls, then up to 20 timed calls with other
// query vectors (fewer when one call is slow, and 2 past the service's 5 s statement timeout: the
// count is then printed), median and p95.
//
// Engines: 'exact' (toolgate_dot over real[]) always; where the server offers the `vector`
// extension, also 'pgvector' before any index exists (its exact <=>) and again once
// VectorIndex.prepare() has built its HNSW index (build time; recall against pgvector exact).
// Experiments, not what the service runs: toolgate_dot written with unnest() in its select list
// (redefined in the bench's own database for the measurement, then restored), with and without JIT;
// and VectorSearch's pgvector query with the distance alone in its inner ORDER BY.
//
// Runs on a throwaway embedded PostgreSQL and, when DATABASE_URL is set, on that server too, in a
// database of its own that is dropped at the end. Flags: `-- --chunks 10000,100000`,
// `--dims 256,1536`, `--only url|embedded`, `--calls 20` (most timed calls per cell),
// `--hnsw-memory fit|server` (maintenance_work_mem for the HNSW build: raised to hold the graph, or
// the server's own), `--hnsw-build-limit 180` (seconds before a build is cancelled; 0: none),
// `--no-experiments`.
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { ClientBase } from 'pg';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createSequelize } from '../src/db/connect';
import { ensureDatabase, withClient, withDatabase } from '../src/db/database-url';
import { quoteIdent } from '../src/db/quote-ident';
import { migrateUp } from '../src/db/migrate';
import { MAX_TOP_K, type SearchHit } from '../src/documents/document-search';
import { VectorIndex } from '../src/documents/vector-index';
import { VectorSearch, type VectorEngine } from '../src/documents/vector-search';
import type { EmbeddingSpace } from '../src/llm/embeddings';
import { withEmbeddedServer } from './postgres-server';

const OTHER_AGENTS = 9;
const CHUNKS_PER_DOCUMENT = 20;
const MODEL = 'bench-random-unit-vectors';
const TOPS = [10, MAX_TOP_K];
const WARMUPS = 3;
/** After a warm-up call this slow, no more warm-ups. */
const SLOW_CALL_MS = 1_000;
/** Timed calls per cell: as many as fit in this time, at least MIN_TIMED, at most --calls. */
const CELL_BUDGET_MS = 5_000;
const MIN_TIMED = 3;
/** After a warm-up call longer than the service's statement timeout, this many timed calls only. */
const SLOW_TIMED = 2;
/** TOOLGATE_DB_QUERY_TIMEOUT_MS's default (src/app/config.ts): the service's statement_timeout. */
const SERVICE_TIMEOUT_MS = 5_000;
const LOAD_BATCH = 5_000;

/** The experimental body of toolgate_dot (migration 20261201000009's: SELECT sum(x::double precision * y) FROM unnest(a, b) AS t(x, y)). */
const DOT_SELECT_LIST_UNNEST = 'SELECT sum(x::double precision * y) FROM (SELECT unnest(a) AS x, unnest(b) AS y) AS t';

interface Options {
  chunks: number[];
  dims: number[];
  only?: 'url' | 'embedded';
  calls: number;
  hnswMemory: 'fit' | 'server';
  /** Seconds an HNSW build may take before it is cancelled; 0: no limit. */
  hnswBuildLimit: number;
  experiments: boolean;
}

interface Cell {
  times: number[];
  /** The hits of each timed call, in query order. */
  hits: Hit[][];
}

type Hit = Pick<SearchHit, 'chunk_id'>;

/** What a cell measured: the service's engines, then the experiments. */
type Column = 'exact' | 'pgvector' | 'hnsw' | 'unnest' | 'unnest, jit off' | 'hnsw by distance';

interface Build {
  ms: number;
  memory: string;
  notices: string[];
  /** Null when the build was cancelled at --hnsw-build-limit, or skipped. */
  index: string | null;
  /** Why the build was not started. */
  skipped?: string;
}

interface ConfigResult {
  chunks: number;
  dims: number;
  loadMs: number;
  cells: Map<string, Cell>;
  build?: Build;
  /** EXPLAIN of each cell's last call, by `${column}@${top}`. */
  plans: Map<string, string>;
}

const cellOf = (r: ConfigResult, column: Column, top: number) => r.cells.get(`${column}@${top}`);

interface ServerInfo {
  version: string;
  jit: string;
  jitAvailable: boolean;
  jitAboveCost: number;
  jitInlineAboveCost: number;
  jitOptimizeAboveCost: number;
  workersPerGather: string;
  maxParallelWorkers: string;
  sharedBuffers: string;
  workMem: string;
  maintenanceWorkMem: string;
  maintenanceWorkMemBytes: number;
  vector: string | null;
}

// ---------------------------------------------------------------------------------------------
// Figures

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Nearest rank: with 20 calls the 19th fastest, with fewer than 20 the slowest. */
function p95(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.ceil(0.95 * s.length) - 1]!;
}

const ms = (x: number) => (x < 10 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US'));
const sec = (x: number) => `${(x / 1000).toFixed(1)} s`;

function cellText(cell: Cell | undefined, calls: number): string {
  if (!cell) return '-';
  const n = cell.times.length < calls ? ` (${cell.times.length})` : '';
  return `${ms(median(cell.times))} / ${ms(p95(cell.times))}${n}`;
}

/** Mean share of the exact ranking's ids found, over the queries both cells ran. */
function recall(truth: Cell, got: Cell): { recall: number; queries: number } {
  const n = Math.min(truth.hits.length, got.hits.length);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const want = new Set(truth.hits[i]!.map((h) => h.chunk_id));
    sum += want.size === 0 ? 1 : got.hits[i]!.filter((h) => want.has(h.chunk_id)).length / want.size;
  }
  return { recall: n ? sum / n : NaN, queries: n };
}

// ---------------------------------------------------------------------------------------------
// Query vectors: the same distribution as the data, from a seeded generator, so that every engine
// gets the same queries in the same order and the runs repeat.

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Queries {
  warmup: number[][];
  timed: number[][];
}

function queriesFor(dims: number, timed: number): Queries {
  const random = mulberry32(dims);
  const vector = () => {
    const v = Array.from({ length: dims }, () => random() * 2 - 1);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
  return { warmup: Array.from({ length: WARMUPS }, vector), timed: Array.from({ length: timed }, vector) };
}

/** Warm-up calls (none when `warm` is false), then the timed calls. */
async function measure(run: (q: number[]) => Promise<Hit[]>, queries: Queries, calls: number, warm: boolean): Promise<Cell> {
  let last = warm ? 0 : Infinity;
  for (const q of warm ? queries.warmup : []) {
    const t0 = performance.now();
    await run(q);
    last = performance.now() - t0;
    if (last > SLOW_CALL_MS) break;
  }
  const n =
    last > SERVICE_TIMEOUT_MS ? SLOW_TIMED : Math.max(MIN_TIMED, Math.min(calls, Math.floor(CELL_BUDGET_MS / Math.max(last, 1e-3))));
  const cell: Cell = { times: [], hits: [] };
  for (const q of queries.timed.slice(0, n)) {
    const t0 = performance.now();
    cell.hits.push(await run(q));
    cell.times.push(performance.now() - t0);
  }
  return cell;
}

// ---------------------------------------------------------------------------------------------
// The database

/** Session settings run on every new connection of a Sequelize; notices are collected. */
function withSessionSettings(sequelize: Sequelize, settings: string[], notices?: string[]): Sequelize {
  sequelize.addHook('afterConnect', async (connection: unknown) => {
    const client = connection as ClientBase;
    if (notices) client.on('notice', (n) => notices.push(n.message ?? String(n)));
    for (const s of settings) await client.query(s);
  });
  return sequelize;
}

/** The statements a Sequelize runs while `on`, to EXPLAIN the last search as it was sent. */
class StatementLog {
  on = false;
  statements: { sql: string; bind?: unknown[] }[] = [];
  readonly logging = (line: string, options?: { bind?: unknown[] }) => {
    if (this.on) this.statements.push({ sql: line.replace(/^Executing \([^)]*\): /, ''), bind: options?.bind });
  };
}

async function describeServer(sequelize: Sequelize): Promise<ServerInfo> {
  const [r] = await sequelize.query<Record<string, string | boolean | null>>(
    `SELECT current_setting('server_version') AS version, current_setting('jit') AS jit, pg_jit_available() AS jit_available,
            current_setting('jit_above_cost') AS jit_above, current_setting('jit_inline_above_cost') AS jit_inline,
            current_setting('jit_optimize_above_cost') AS jit_optimize,
            current_setting('max_parallel_workers_per_gather') AS per_gather, current_setting('max_parallel_workers') AS max_workers,
            current_setting('shared_buffers') AS shared_buffers, current_setting('work_mem') AS work_mem,
            current_setting('maintenance_work_mem') AS mwm,
            (SELECT setting::bigint * 1024 FROM pg_settings WHERE name = 'maintenance_work_mem') AS mwm_bytes,
            (SELECT default_version FROM pg_available_extensions WHERE name = 'vector') AS vector`,
    { type: QueryTypes.SELECT },
  );
  return {
    version: String(r!.version).split(' ')[0]!,
    jit: String(r!.jit),
    jitAvailable: r!.jit_available === true,
    jitAboveCost: Number(r!.jit_above),
    jitInlineAboveCost: Number(r!.jit_inline),
    jitOptimizeAboveCost: Number(r!.jit_optimize),
    workersPerGather: String(r!.per_gather),
    maxParallelWorkers: String(r!.max_workers),
    sharedBuffers: String(r!.shared_buffers),
    workMem: String(r!.work_mem),
    maintenanceWorkMem: String(r!.mwm),
    maintenanceWorkMemBytes: Number(r!.mwm_bytes),
    vector: (r!.vector as string | null) ?? null,
  };
}

/** Runs `jobs` with at most `concurrency` at a time. */
async function pool(jobs: (() => Promise<unknown>)[], concurrency: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) await jobs[next++]!();
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Empties the tables, then writes N chunks for `agent` and N spread over `others`, with vectors. */
async function load(sequelize: Sequelize, agent: number, others: number[], chunks: number, dims: number): Promise<void> {
  await sequelize.query('TRUNCATE document_chunks, documents RESTART IDENTITY CASCADE');
  const counts = new Map<number, number>([[agent, chunks]]);
  others.forEach((id, i) => counts.set(id, Math.floor(chunks / others.length) + (i < chunks % others.length ? 1 : 0)));
  const jobs: (() => Promise<unknown>)[] = [];
  for (const [agentId, count] of counts) {
    await sequelize.query(
      `INSERT INTO documents (agent_id, title, content)
       SELECT $1, 'Bench document ' || k, '' FROM generate_series(1, $2::int) AS k`,
      { bind: [agentId, Math.ceil(count / CHUNKS_PER_DOCUMENT)] },
    );
    for (let from = 0; from < count; from += LOAD_BATCH) {
      const to = Math.min(count, from + LOAD_BATCH);
      // One random vector per chunk (the lateral subquery names g, so it runs per row), scaled to length 1.
      jobs.push(() =>
        sequelize.query(
          `WITH docs AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM documents WHERE agent_id = $1)
           INSERT INTO document_chunks (document_id, agent_id, chunk_index, content, embedding, embedding_model, embedding_dimensions)
           SELECT d.id, $1, g % ${CHUNKS_PER_DOCUMENT}, format('chunk %s of agent %s', g, $1::int),
                  (SELECT array_agg((x / s.norm)::real) FROM unnest(s.xs) AS x), $4, $5
             FROM generate_series($2::int, $3::int - 1) AS g
             JOIN docs d ON d.k = g / ${CHUNKS_PER_DOCUMENT}
             CROSS JOIN LATERAL (
               SELECT array_agg(x) AS xs, sqrt(sum(x * x)) AS norm
                 FROM (SELECT random() * 2 - 1 AS x FROM generate_series(1, $5::int) WHERE g >= 0) AS r
             ) AS s`,
          { bind: [agentId, from, to, MODEL, dims] },
        ),
      );
    }
  }
  await pool(jobs, Math.max(1, Math.min(4, os.cpus().length)));
  await sequelize.query('ANALYZE documents, document_chunks');
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Parallel Aware'?: boolean;
  'Workers Planned'?: number;
  'Total Cost'?: number;
  Plans?: PlanNode[];
}

/** EXPLAIN of the last search `log` saw (its SET LOCALs first), in one line: the chunk scan's nodes and JIT. */
async function explainLast(sequelize: Sequelize, log: StatementLog, server: ServerInfo): Promise<string> {
  const search = [...log.statements].reverse().find((s) => /WITH near AS/.test(s.sql));
  if (!search) return '(no search statement seen)';
  const set = [...log.statements].reverse().find((s) => /^SET LOCAL/.test(s.sql));
  return sequelize.transaction(async (transaction) => {
    if (set) await sequelize.query(set.sql, { transaction });
    const [row] = await sequelize.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) ${search.sql}`, {
      bind: search.bind,
      type: QueryTypes.SELECT,
      transaction,
    });
    const plan = row!['QUERY PLAN'][0]!.Plan;
    const limit = findNode(plan, (n) => n['Node Type'] === 'Limit');
    const nodes: string[] = [];
    const walk = (n: PlanNode) => {
      const w = n['Workers Planned'];
      const workers = w !== undefined ? ` (${w} worker${w === 1 ? '' : 's'})` : '';
      nodes.push(
        `${n['Parallel Aware'] ? 'Parallel ' : ''}${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}${workers}`,
      );
      n.Plans?.forEach(walk);
    };
    (limit?.Plans ?? [plan]).forEach(walk);
    const cost = plan['Total Cost'] ?? 0;
    const jit =
      server.jit !== 'on' || !server.jitAvailable || cost <= server.jitAboveCost
        ? 'no JIT'
        : `JIT${cost > server.jitInlineAboveCost ? ' + inlining' : ''}${cost > server.jitOptimizeAboveCost ? ' + optimisation' : ''}`;
    return `${nodes.join(' > ')}; cost ${cost.toExponential(1)}, ${jit}`;
  });
}

function findNode(n: PlanNode, test: (n: PlanNode) => boolean): PlanNode | undefined {
  if (test(n)) return n;
  for (const c of n.Plans ?? []) {
    const found = findNode(c, test);
    if (found) return found;
  }
  return undefined;
}

/** Memory an in-memory HNSW build needs, roughly: each vector, its neighbour lists and overhead, with a margin. */
function hnswMemoryBytes(rows: number, dims: number): number {
  const mb = Math.ceil((rows * (dims * 4 + 1024) * 1.25) / 2 ** 20 / 64) * 64;
  return mb * 2 ** 20;
}

const progress = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

// ---------------------------------------------------------------------------------------------
// An experiment: VectorSearch's pgvector query with the tie-breakers left out of the inner ORDER BY

/**
 * The query VectorSearch sends for engine 'pgvector', word for word, but for the inner ORDER BY:
 * the distance alone instead of (distance, document_id, chunk_index). PostgreSQL orders by an index
 * only when the index yields every ORDER BY key, so only this form can be answered by the HNSW index.
 */
function nearestByDistanceOnly(
  sequelize: Sequelize,
  agentId: number,
  vector: number[],
  space: EmbeddingSpace,
  limit: number,
): Promise<Hit[]> {
  const dims = space.dimensions;
  const distance = `(c.embedding::vector(${dims}) <=> $1::real[]::vector(${dims}))`;
  return sequelize.transaction(async (transaction) => {
    await sequelize.query(`SET LOCAL hnsw.iterative_scan = strict_order; SET LOCAL hnsw.ef_search = ${Math.max(40, limit * 2)}`, {
      transaction,
    });
    const rows = await sequelize.query<{ id: string }>(
      `WITH near AS (
         SELECT c.id, c.document_id, c.chunk_index, c.content, 1 - ${distance} AS score
           FROM document_chunks c
          WHERE c.agent_id = $2 AND c.embedding_model = ${sequelize.escape(space.model)} AND c.embedding_model = $3 AND c.embedding_dimensions = $4
          ORDER BY ${distance}
          LIMIT $5
       )
       SELECT n.id, n.document_id, coalesce(d.title, '') AS title, n.chunk_index, n.content, n.score
         FROM near n JOIN documents d ON d.id = n.document_id
        ORDER BY n.score DESC, n.document_id, n.chunk_index`,
      { bind: [vector, agentId, space.model, dims, limit], type: QueryTypes.SELECT, transaction },
    );
    return rows.map((r) => ({ chunk_id: Number(r.id) }));
  });
}

// ---------------------------------------------------------------------------------------------
// One server

async function benchServer(adminUrl: string, opts: Options, label: string): Promise<void> {
  const started = performance.now();
  const loadBefore = os.loadavg()[0]!;
  const dbName = `toolgate_bench_vectors_${process.pid}`;
  await ensureDatabase(adminUrl, dbName);
  const url = withDatabase(adminUrl, dbName);
  const log = new StatementLog();
  const sequelize = createSequelize(url, { queryTimeoutMs: 0, logging: log.logging });
  const jitOff = withSessionSettings(createSequelize(url, { queryTimeoutMs: 0 }), ['SET jit = off']);
  const results: ConfigResult[] = [];
  let server: ServerInfo | undefined;
  try {
    await migrateUp(sequelize);
    server = await describeServer(sequelize);
    const info = server;
    const [agent, ...others] = (
      await sequelize.query<{ id: number }>(
        `INSERT INTO agents (name) SELECT 'Vector bench agent ' || k FROM generate_series(0, ${OTHER_AGENTS}) AS k RETURNING id`,
        { type: QueryTypes.SELECT },
      )
    ).map((r) => r.id);
    const [fn] = await sequelize.query<{ def: string }>(`SELECT pg_get_functiondef('toolgate_dot(real[], real[])'::regprocedure) AS def`, {
      type: QueryTypes.SELECT,
    });
    const originalDot = fn!.def;
    const exact = new VectorSearch(sequelize, () => 'exact');
    const exactJitOff = new VectorSearch(jitOff, () => 'exact');
    const pgvector = new VectorSearch(sequelize, (): VectorEngine => 'pgvector');
    const jitMatters = info.jit === 'on' && info.jitAvailable;
    if (info.vector) await sequelize.query('CREATE EXTENSION IF NOT EXISTS vector');

    for (const chunks of opts.chunks) {
      for (const dims of opts.dims) {
        const space: EmbeddingSpace = { model: MODEL, dimensions: dims };
        const queries = queriesFor(dims, opts.calls);
        const result: ConfigResult = { chunks, dims, loadMs: 0, cells: new Map(), plans: new Map() };
        results.push(result);
        const at = () => `${label}, ${((performance.now() - started) / 1000).toFixed(0)} s:`;
        progress(`${at()} loading ${chunks} + ${chunks} chunks × ${dims} dimensions`);
        const t0 = performance.now();
        await load(sequelize, agent!, others, chunks, dims);
        result.loadMs = performance.now() - t0;

        // Times `search` at `top`, and keeps the plan of its last call when `plan`.
        // After a cell of the exact SQL slower than the service's timeout, the next ones of the exact
        // SQL read the same vectors, now cached: they skip the warm-up (it would take as long again).
        let slowExact = false;
        const cell = async (column: Column, top: number, search: (q: number[]) => Promise<Hit[]>, plan = true) => {
          progress(`${at()} ${chunks} × ${dims}, ${column}, top ${top}`);
          const exactSql = column === 'exact' || column === 'unnest' || column === 'unnest, jit off';
          log.statements = [];
          log.on = plan;
          try {
            const c = await measure(search, queries, opts.calls, !(exactSql && slowExact));
            result.cells.set(`${column}@${top}`, c);
            if (exactSql) slowExact = median(c.times) > SERVICE_TIMEOUT_MS;
          } finally {
            log.on = false;
          }
          if (plan) result.plans.set(`${column}@${top}`, await explainLast(sequelize, log, info));
        };
        const near = (s: VectorSearch, top: number) => (q: number[]) => s.nearest(agent!, q, space, top);

        for (const top of TOPS) await cell('exact', top, near(exact, top));
        if (opts.experiments) {
          await sequelize.query(
            `CREATE OR REPLACE FUNCTION toolgate_dot(a REAL[], b REAL[]) RETURNS DOUBLE PRECISION
               LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 10000 AS $$ ${DOT_SELECT_LIST_UNNEST} $$`,
          );
          try {
            await cell('unnest', MAX_TOP_K, near(exact, MAX_TOP_K));
            if (jitMatters) await cell('unnest, jit off', MAX_TOP_K, near(exactJitOff, MAX_TOP_K), false);
          } finally {
            await sequelize.query(originalDot);
          }
        }
        if (!info.vector) continue;

        for (const top of TOPS) await cell('pgvector', top, near(pgvector, top));
        const rows = chunks * 2;
        const need = hnswMemoryBytes(rows, dims);
        const raise = opts.hnswMemory === 'fit' && need > info.maintenanceWorkMemBytes;
        const memory = raise ? `${need / 2 ** 20}MB` : info.maintenanceWorkMem;
        const notices: string[] = [];
        const build: Build = {
          ms: 0,
          memory: raise ? `${memory}, raised from ${info.maintenanceWorkMem}` : `${memory}, the server's`,
          notices,
          index: null,
        };
        result.build = build;
        // A build that the ones before it say would run past the limit is not started: scaled by rows and dimensions.
        const expected = results
          .filter((r) => r.build?.index)
          .map((r) => ({ from: r, ms: (r.build!.ms * rows * dims) / (r.chunks * 2 * r.dims) }))
          .sort((a, b) => b.ms - a.ms)[0];
        if (opts.hnswBuildLimit && expected && expected.ms > opts.hnswBuildLimit * 1000) {
          build.skipped = `not started: about ${sec(expected.ms)} expected (${expected.from.chunks} × ${expected.from.dims}'s build scaled by rows × dimensions)`;
          continue;
        }
        // As the service runs it (tg.migrate() starts it in the background, with no statement timeout).
        const builder = withSessionSettings(
          createSequelize(url, { queryTimeoutMs: opts.hnswBuildLimit * 1000, pool: { max: 1 } }),
          raise ? [`SET maintenance_work_mem = '${memory}'`] : [],
          notices,
        );
        try {
          progress(`${at()} ${chunks} × ${dims}, building the HNSW index (${rows} rows, maintenance_work_mem ${memory})`);
          const b0 = performance.now();
          try {
            // prepare() starts the build in the background, with no statement timeout (as the service
            // does); whenBuilt() is its end. So --hnsw-build-limit no longer cancels a build.
            const index = new VectorIndex(builder);
            await index.prepare(space);
            const state = await index.whenBuilt();
            if (!state.index) throw new Error(`VectorIndex.prepare built no index: ${state.reason ?? 'no reason given'}`);
            build.index = state.index;
          } catch (err) {
            if (!isStatementTimeout(err)) throw err;
          }
          build.ms = performance.now() - b0;
        } finally {
          await builder.close();
        }
        if (!build.index) continue;
        for (const top of TOPS) await cell('hnsw', top, near(pgvector, top));
        if (opts.experiments)
          for (const top of TOPS) await cell('hnsw by distance', top, (q) => nearestByDistanceOnly(sequelize, agent!, q, space, top));
        await sequelize.query(`DROP INDEX ${quoteIdent(build.index)}`);
      }
    }
  } finally {
    await jitOff.close();
    await sequelize.close();
    await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(dbName)} WITH (FORCE)`)).catch(() => undefined);
  }
  print(label, server!, results, opts, { loadBefore, loadAfter: os.loadavg()[0]!, ms: performance.now() - started });
}

/** The server cancelled the statement (57014): here, the HNSW build ran into --hnsw-build-limit. */
function isStatementTimeout(err: unknown): boolean {
  const e = err as { original?: { code?: string }; parent?: { code?: string }; code?: string };
  return (e.original?.code ?? e.parent?.code ?? e.code) === '57014' || /timeout/i.test((err as Error).message ?? '');
}

// ---------------------------------------------------------------------------------------------
// Printing

function print(
  label: string,
  server: ServerInfo,
  results: ConfigResult[],
  opts: Options,
  run: { loadBefore: number; loadAfter: number; ms: number },
): void {
  const cpus = os.cpus();
  const out: string[] = [];
  const jitText = `jit = ${server.jit}${server.jitAvailable ? ` (jit_above_cost ${server.jitAboveCost})` : ' (not available in this build)'}`;
  const fewer =
    `"(n)": n timed calls, when fewer than ${opts.calls}; ${SLOW_TIMED} when a call takes over ${SERVICE_TIMEOUT_MS / 1000} s ` +
    `(no warm-up then after an exact-SQL cell that slow: the vectors are cached)`;
  out.push(
    '',
    `exact vector search, one agent, top 10 and top ${MAX_TOP_K} (median / p95 ms; ${fewer})`,
    `  server: PostgreSQL ${server.version} (${label}), ${jitText}, max_parallel_workers_per_gather = ${server.workersPerGather}, ` +
      `max_parallel_workers = ${server.maxParallelWorkers}, shared_buffers = ${server.sharedBuffers}, work_mem = ${server.workMem}`,
    `  machine: ${cpus.length} CPUs (${cpus[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GB, Node ${process.version}; ` +
      `load average (1 min) ${run.loadBefore.toFixed(2)} at the start, ${run.loadAfter.toFixed(2)} at the end (other processes share these CPUs)`,
    `  data: the agent's N chunks and N more over ${OTHER_AGENTS} other agents, ${CHUNKS_PER_DOCUMENT} chunks per document, random unit vectors (uniform per dimension, scaled to length 1), ANALYZEd`,
    `  exact SQL: VectorSearch.nearest as shipped: toolgate_dot(embedding, query), a SQL function (SELECT sum(x::float8 * y) FROM unnest(a, b)),`,
    `    once per chunk of the agent in the space, a top-k sort, then the titles. pgvector exact: the same query ordered by embedding::vector(d) <=> query`,
    `    before any HNSW index exists; pgvector HNSW: the same again once VectorIndex.prepare has built its index. Top ${MAX_TOP_K} is what hybrid search asks for.`,
  );
  const w = 22;
  out.push(
    `  ${'chunks'.padEnd(8)}${'dims'.padEnd(6)}${'top'.padEnd(5)}${'exact SQL'.padEnd(w)}${'pgvector exact'.padEnd(w)}${'pgvector HNSW'.padEnd(w)}${'recall@k'.padEnd(12)}HNSW build`,
  );
  const notMeasured = server.vector ? '-' : 'not measured';
  for (const r of results) {
    for (const top of TOPS) {
      const truth = cellOf(r, 'pgvector', top);
      const hnsw = cellOf(r, 'hnsw', top);
      const build =
        top === TOPS[0] && r.build
          ? r.build.index
            ? sec(r.build.ms)
            : r.build.skipped
              ? 'not started'
              : `cancelled at ${sec(r.build.ms)}`
          : '';
      out.push(
        `  ${String(r.chunks).padEnd(8)}${String(r.dims).padEnd(6)}${String(top).padEnd(5)}${cellText(cellOf(r, 'exact', top), opts.calls).padEnd(w)}` +
          `${(truth ? cellText(truth, opts.calls) : notMeasured).padEnd(w)}${(hnsw ? cellText(hnsw, opts.calls) : notMeasured).padEnd(w)}` +
          `${recallText(truth, hnsw, opts.calls).padEnd(12)}${build}`,
      );
    }
  }
  if (!server.vector) {
    out.push(`  pgvector exact and HNSW: not measured: this server has no pgvector extension (no 'vector' in pg_available_extensions).`);
  } else {
    out.push(
      `  recall@k: share of pgvector exact's top k that the HNSW row returned, same queries (hnsw.iterative_scan = strict_order, ef_search = max(40, 2k), as VectorSearch sets)`,
    );
    const unused = results.filter((r) =>
      TOPS.some((top) => r.plans.has(`hnsw@${top}`) && !/toolgate_hnsw/.test(r.plans.get(`hnsw@${top}`)!)),
    );
    if (unused.length)
      out.push(
        `  the planner did not use the HNSW index for VectorSearch's query in ${unused.map((r) => `${r.chunks} × ${r.dims}`).join(', ')} (see the plans):`,
        `    its inner ORDER BY is (distance, document_id, chunk_index), and an index scan orders a query only when it yields every key`,
      );
    out.push(
      `  HNSW build: VectorIndex.prepare(space): one index over the vectors of every agent in the space (2N rows; pgvector's defaults m = 16, ef_construction = 64),`,
      `  not started when the builds before it say it would take past --hnsw-build-limit (${opts.hnswBuildLimit ? `${opts.hnswBuildLimit} s` : 'none'}):`,
    );
    for (const r of results.filter((x) => x.build)) {
      const b = r.build!;
      const notice = b.notices.find((n) => /maintenance_work_mem/.test(n));
      out.push(
        `    ${r.chunks} × ${r.dims}: ${b.index ? sec(b.ms) : (b.skipped ?? `not finished in ${sec(b.ms)}`)}, maintenance_work_mem ${b.memory}` +
          `${notice ? `; server notice: "${notice}"` : ''}`,
      );
    }
    const small = results.filter((r) => r.build && hnswMemoryBytes(r.chunks * 2, r.dims) > server.maintenanceWorkMemBytes);
    if (small.length && opts.hnswMemory === 'fit')
      out.push(
        `    the server's maintenance_work_mem (${server.maintenanceWorkMem}) is short of the graph for ${small.map((r) => `${r.chunks} × ${r.dims}`).join(', ')}:`,
        `    pgvector then builds much more slowly (\`--hnsw-memory server\` measures that)`,
      );
    out.push(
      `    the service builds it in the background, with no statement timeout; builds that a ${SERVICE_TIMEOUT_MS / 1000} s statement timeout would have cancelled`,
      `    (TOOLGATE_DB_QUERY_TIMEOUT_MS's default) here: ${
        results
          .filter((r) => r.build && r.build.ms > SERVICE_TIMEOUT_MS)
          .map((r) => `${r.chunks} × ${r.dims}`)
          .join(', ') || 'none'
      }`,
    );
    const disagree = results.flatMap((r) =>
      TOPS.flatMap((top) => {
        const a = cellOf(r, 'exact', top);
        const b = cellOf(r, 'pgvector', top);
        const rc = a && b ? recall(b, a) : undefined;
        return rc && rc.recall < 1 ? [`${r.chunks} × ${r.dims} top ${top}: ${rc.recall.toFixed(3)}`] : [];
      }),
    );
    out.push(
      `  exact SQL and pgvector exact return the same chunks${disagree.length ? `, but for: ${disagree.join('; ')}` : ' for every query both ran'}`,
    );
  }
  out.push(
    `  load (INSERT … SELECT of 2N rows with their vectors, then ANALYZE): ${results.map((r) => `${r.chunks} × ${r.dims} ${sec(r.loadMs)}`).join(', ')}`,
  );

  const over: string[] = [];
  const names: Record<Column, string> = {
    exact: 'exact SQL',
    pgvector: 'pgvector exact',
    hnsw: 'pgvector HNSW',
    unnest: 'experiment: select-list unnest',
    'unnest, jit off': 'experiment: select-list unnest, jit off',
    'hnsw by distance': 'experiment: HNSW by distance only',
  };
  for (const r of results)
    for (const [key, c] of r.cells) {
      const [column, top] = key.split('@') as [Column, string];
      const m = median(c.times);
      const p = p95(c.times);
      if (m > SERVICE_TIMEOUT_MS) over.push(`${r.chunks} × ${r.dims} ${names[column]}, top ${top}: median ${ms(m)} ms`);
      else if (p > SERVICE_TIMEOUT_MS) over.push(`${r.chunks} × ${r.dims} ${names[column]}, top ${top}: p95 ${ms(p)} ms`);
    }
  out.push(
    `  over the service's ${SERVICE_TIMEOUT_MS / 1000} s statement timeout (TOOLGATE_DB_QUERY_TIMEOUT_MS's default), which cancels the query: ${over.length ? '' : 'none'}`,
    ...over.map((o) => `    ${o}`),
  );
  out.push(`  plans (EXPLAIN of each cell's last call, the nodes under the inner LIMIT):`);
  for (const r of results)
    for (const column of Object.keys(names) as Column[]) {
      const plans = TOPS.map((top) => r.plans.get(`${column}@${top}`));
      if (plans.length === 2 && plans[0] !== undefined && plans[0] === plans[1])
        out.push(`    ${r.chunks} × ${r.dims} ${names[column]}, top ${TOPS.join(' and ')}: ${plans[0]}`);
      else TOPS.forEach((top, i) => plans[i] && out.push(`    ${r.chunks} × ${r.dims} ${names[column]}, top ${top}: ${plans[i]}`));
    }

  if (opts.experiments) {
    const jit = server.jit === 'on' && server.jitAvailable;
    out.push(
      '',
      `experiment: the exact SQL's arithmetic, top ${MAX_TOP_K}, median / p95 ms (not what the service runs)`,
      `  ${'chunks'.padEnd(8)}${'dims'.padEnd(6)}${'as shipped'.padEnd(w)}${'select-list unnest'.padEnd(w)}select-list unnest, jit off`,
    );
    for (const r of results)
      out.push(
        `  ${String(r.chunks).padEnd(8)}${String(r.dims).padEnd(6)}${cellText(cellOf(r, 'exact', MAX_TOP_K), opts.calls).padEnd(w)}` +
          `${cellText(cellOf(r, 'unnest', MAX_TOP_K), opts.calls).padEnd(w)}${jit ? cellText(cellOf(r, 'unnest, jit off', MAX_TOP_K), opts.calls) : 'n/a (no JIT here)'}`,
      );
    out.push(
      `  select-list unnest: toolgate_dot(a real[], b real[]) redefined in the bench's database, as before LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 10000:`,
      `    ${DOT_SELECT_LIST_UNNEST}`,
      `    instead of SELECT sum(x::double precision * y) FROM unnest(a, b) AS t(x, y); the query is VectorSearch's, unchanged`,
      `  jit off: the same on connections that ran SET jit = off`,
    );
    if (server.vector) {
      out.push(
        '',
        `experiment: pgvector with the HNSW index, inner ORDER BY the distance alone (VectorSearch's query without ", c.document_id, c.chunk_index"), median / p95 ms`,
        `  ${'chunks'.padEnd(8)}${'dims'.padEnd(6)}${'top 10'.padEnd(w)}${'recall@10'.padEnd(12)}${`top ${MAX_TOP_K}`.padEnd(w)}recall@${MAX_TOP_K}`,
      );
      for (const r of results) {
        const [a, b] = TOPS.map((top) => cellOf(r, 'hnsw by distance', top));
        const [ta, tb] = TOPS.map((top) => cellOf(r, 'pgvector', top));
        const missing = r.build && !r.build.index ? 'no index' : '-';
        out.push(
          `  ${String(r.chunks).padEnd(8)}${String(r.dims).padEnd(6)}${(a ? cellText(a, opts.calls) : missing).padEnd(w)}${recallText(ta, a, opts.calls).padEnd(12)}` +
            `${(b ? cellText(b, opts.calls) : '-').padEnd(w)}${recallText(tb, b, opts.calls)}`,
        );
      }
      out.push(
        `  recall against pgvector exact, same queries; the plans above say whether the HNSW index answered. Uniform random vectors are a hard case`,
        `  for HNSW (every cosine is near 0, no neighbourhoods): these recalls say little about real embeddings, which cluster`,
      );
    }
  }
  out.push(`  ${label} run: ${sec(run.ms)}`);
  console.log(out.join('\n'));
}

function recallText(truth: Cell | undefined, got: Cell | undefined, calls: number): string {
  if (!truth || !got) return '-';
  const rc = recall(truth, got);
  return `${rc.recall.toFixed(3)}${rc.queries < calls ? ` (${rc.queries})` : ''}`;
}

// ---------------------------------------------------------------------------------------------

function numbers(flag: string, value: string): number[] {
  const list = value.split(',').map((n) => Number(n.replace(/_/g, '')));
  if (list.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--${flag} takes whole numbers, comma-separated: got "${value}"`);
  return list;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      chunks: { type: 'string', default: '10000,100000' },
      dims: { type: 'string', default: '256,1536' },
      only: { type: 'string' },
      calls: { type: 'string', default: '20' },
      'hnsw-memory': { type: 'string', default: 'fit' },
      'hnsw-build-limit': { type: 'string', default: '180' },
      'no-experiments': { type: 'boolean', default: false },
    },
  });
  if (values.only !== undefined && values.only !== 'url' && values.only !== 'embedded')
    throw new Error(`--only takes url or embedded: got "${values.only}"`);
  const hnswMemory = values['hnsw-memory'];
  if (hnswMemory !== 'fit' && hnswMemory !== 'server') throw new Error(`--hnsw-memory takes fit or server: got "${hnswMemory}"`);
  const dims = numbers('dims', values.dims);
  const calls = numbers('calls', values.calls)[0]!;
  if (calls < MIN_TIMED) throw new Error(`--calls takes at least ${MIN_TIMED}`);
  const limit = values['hnsw-build-limit'] === '0' ? 0 : numbers('hnsw-build-limit', values['hnsw-build-limit'])[0]!;
  return {
    chunks: numbers('chunks', values.chunks),
    dims,
    only: values.only,
    calls,
    hnswMemory,
    hnswBuildLimit: limit,
    experiments: !values['no-experiments'],
  };
}

async function main(): Promise<void> {
  const opts = options(process.argv.slice(2));
  const started = performance.now();
  const given = process.env.DATABASE_URL?.trim();
  if (opts.only === 'url' && !given) throw new Error('--only url needs DATABASE_URL');
  if (given && opts.only !== 'embedded') await benchServer(given, opts, 'DATABASE_URL');
  if (opts.only !== 'url') await withEmbeddedServer((adminUrl) => benchServer(adminUrl, opts, 'embedded'));
  console.log(`\ntotal ${sec(performance.now() - started)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
