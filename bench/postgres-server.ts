// The PostgreSQL a benchmark runs against: DATABASE_URL's server when set, else a throwaway
// embedded one, stopped and removed when the benchmark is done; and a database of its own on it.
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureDatabase, withClient, withDatabase } from '../src/db/database-url';
import { quoteIdent } from '../src/db/quote-ident';
import { startEmbeddedPostgres } from '../src/db/embedded';

export async function withPostgresServer<T>(run: (adminUrl: string) => Promise<T>): Promise<T> {
  const given = process.env.DATABASE_URL?.trim();
  if (given) return run(given);
  return withEmbeddedServer(run);
}

/**
 * A throwaway embedded PostgreSQL, whatever DATABASE_URL says. It runs with fsync and
 * synchronous_commit off, as the tests' does, unless BENCH_DURABLE=1: then as a durable server
 * does, each commit waiting for its WAL to reach the disk.
 */
export async function withEmbeddedServer<T>(run: (adminUrl: string) => Promise<T>): Promise<T> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-bench-'));
  await fs.chmod(tmp, 0o755); // the server runs as `postgres` when we are root
  const durable = process.env.BENCH_DURABLE === '1';
  const server = await startEmbeddedPostgres({ dataDir: path.join(tmp, 'data'), persistent: durable });
  try {
    return await run(server.url);
  } finally {
    await server.stop();
    await fs.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * A database of its own for one benchmark, on the server above: made empty, handed over by URL, and
 * dropped when `run` is done, whatever it did (after `run` has closed its own connections).
 */
export function withBenchDatabase<T>(label: string, run: (url: string) => Promise<T>): Promise<T> {
  return withPostgresServer(async (adminUrl) => {
    const dbName = `toolgate_bench_${label}_${process.pid}`;
    await ensureDatabase(adminUrl, dbName);
    try {
      return await run(withDatabase(adminUrl, dbName));
    } finally {
      await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(dbName)} WITH (FORCE)`)).catch(() => undefined);
    }
  });
}
