// One place that turns a postgres:// URL into a Sequelize instance.
import { Sequelize, type PoolOptions } from 'sequelize';
import { checkSchemaName, inSchema } from './schema';

/**
 * The node-postgres driver. It ships no types and @types/pg is not a dependency, so this declares
 * the little of it used by src/db and test/support.
 */
export interface PgClient {
  connect(): Promise<void>;
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
  end(): Promise<void>;
  /** Lets the process exit while this connection is open (pg 8's Client#unref). */
  unref(): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
}
export interface PgClientConfig {
  connectionString?: string;
  host?: string;
  port?: number;
  database?: string;
  user?: string;
  password?: string;
  connectionTimeoutMillis?: number;
  [option: string]: unknown;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const pg: { Client: new (config: PgClientConfig) => PgClient } = require('pg');

/** The query_timeout error of node-postgres: no answer came, the server may be frozen. */
export const READ_TIMEOUT_MESSAGE = 'Query read timeout';

type QueryCallback = (err: Error | null, result?: unknown) => void;
type ClientInternals = PgClient & { connection?: { stream?: { destroy(): void } } };

/**
 * A client that gives up on its connection when a query gets no answer in time (query_timeout).
 * node-postgres answers the timed-out query with an error but keeps the connection, whose next
 * queries would wait behind the one that never returned, and whose ROLLBACK, queued behind it too,
 * would be dropped: a connection handed back in the middle of a transaction. Destroying its socket
 * makes the pool discard it (Sequelize marks a connection that errs as invalid), and the server
 * rolls back whatever it held once it sees the socket closed.
 */
class GuardedClient extends (pg.Client as unknown as new (config: PgClientConfig) => ClientInternals) {
  override query(...args: unknown[]): never {
    const last = args[args.length - 1];
    if (typeof last === 'function') {
      args[args.length - 1] = (err: Error | null, result?: unknown) => {
        if (err?.message === READ_TIMEOUT_MESSAGE) this.connection?.stream?.destroy();
        (last as QueryCallback)(err, result);
      };
    }
    return (super.query as (...a: unknown[]) => never)(...args);
  }
}

/** node-postgres with GuardedClient, for Sequelize's dialectModule (types and the rest are pg's). */
const guardedPg: object = Object.create(pg, { Client: { value: GuardedClient } });

export interface CreateSequelizeOptions {
  /** Default: false (silent). */
  logging?: false | ((sql: string) => void);
  /** Merged over the defaults below. */
  pool?: PoolOptions;
  /** Time allowed to open one connection; default 5000 ms. */
  connectTimeoutMs?: number;
  /**
   * The longest one query may take: the server cancels it (statement_timeout), and a server that
   * does not answer at all (a frozen host) is given up on a little later (query_timeout), so a
   * request is answered 503 instead of hanging. Default 5000 ms; 0: no limit (migrations).
   */
  queryTimeoutMs?: number;
  /**
   * A schema of toolgate's own: every connection starts with search_path set to it alone
   * (src/db/schema.ts), so a toolgate on this Sequelize keeps all its tables there and needs no pool
   * of its own. Default: none (the database's own search_path, public).
   */
  schema?: string;
}

/** How long past the server's own statement timeout the client waits for any answer at all. */
const READ_TIMEOUT_MARGIN_MS = 1_000;

export function createSequelize(url: string, opts: CreateSequelizeOptions = {}): Sequelize {
  const connectTimeoutMs = opts.connectTimeoutMs ?? 5_000;
  const queryTimeoutMs = opts.queryTimeoutMs ?? 5_000;
  const timeouts = queryTimeoutMs > 0 ? { statement_timeout: queryTimeoutMs, query_timeout: queryTimeoutMs + READ_TIMEOUT_MARGIN_MS } : {};
  const dialectOptions = {
    // An unreachable server fails after this long instead of hanging on the TCP connect.
    connectionTimeoutMillis: connectTimeoutMs,
    keepAlive: true,
    ...timeouts,
  };
  return new Sequelize(url, {
    dialect: 'postgres',
    // The driver itself, so Sequelize never resolves `pg` from the working directory.
    dialectModule: guardedPg,
    logging: opts.logging ?? false,
    pool: {
      max: 5,
      min: 0,
      idle: 10_000,
      // How long a query waits for a free connection (includes opening one) before failing.
      acquire: connectTimeoutMs + 5_000,
      evict: 1_000,
      ...opts.pool,
    },
    dialectOptions:
      opts.schema === undefined
        ? dialectOptions
        : inSchema(dialectOptions, checkSchemaName(opts.schema, 'createSequelize(url, { schema })')),
  });
}
