// Where the service's database is: DATABASE_URL when set, else the embedded PostgreSQL kept under
// dataDir (see embedded.ts), with the service's database created on it when missing.
import { pg, type PgClient } from './connect';
import { startEmbeddedPostgres } from './embedded';
import { quoteIdent } from './quote-ident';

export interface ResolvedDatabase {
  url: string;
  /** true when the embedded server was started (or reused) for this. */
  embedded: boolean;
  /** Stops the embedded server; a no-op with DATABASE_URL. */
  stop(): Promise<void>;
}

export async function resolveDatabase(opts: {
  dataDir: string;
  databaseName: string;
  env: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  /** The caller stops the embedded server itself on SIGTERM, SIGINT and SIGHUP (see embedded.ts). */
  ownSignals?: boolean;
}): Promise<ResolvedDatabase> {
  const given = opts.env.DATABASE_URL?.trim();
  if (given) return { url: given, embedded: false, stop: async () => undefined };

  const server = await startEmbeddedPostgres({ dataDir: opts.dataDir, persistent: true, log: opts.log, ownSignals: opts.ownSignals });
  try {
    await ensureDatabase(server.url, opts.databaseName);
  } catch (err) {
    await server.stop();
    throw err;
  }
  return { url: withDatabase(server.url, opts.databaseName), embedded: true, stop: server.stop };
}

/** The same server and credentials, another database. */
export function withDatabase(url: string, databaseName: string): string {
  const u = new URL(url);
  u.pathname = '/' + encodeURIComponent(databaseName);
  return u.toString();
}

/** CREATE DATABASE unless it exists; safe when several processes race to create it. */
export async function ensureDatabase(adminUrl: string, databaseName: string): Promise<boolean> {
  return withClient(adminUrl, async (client) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [databaseName]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${quoteIdent(databaseName)}`);
      return true;
    } catch (err) {
      // 42P04 duplicate_database; 23505 when the race is lost inside the catalog insert.
      const code = (err as { code?: string }).code;
      if (code === '42P04' || code === '23505') return false;
      throw err;
    }
  });
}

/** Runs fn with a connected pg client on url, closing it afterwards. */
export async function withClient<T>(url: string, fn: (client: PgClient) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined); // a dropped connection surfaces as the failing query's error
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
