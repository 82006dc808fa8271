// One place that turns a postgres:// URL into a Sequelize instance.
import { Sequelize, type PoolOptions } from 'sequelize';

/**
 * The node-postgres driver. It ships no types and @types/pg is not a dependency, so this declares
 * the little of it used by src/db and test/support.
 */
export interface PgClient {
  connect(): Promise<void>;
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
  end(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): unknown;
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

export interface CreateSequelizeOptions {
  /** Default: false (silent). */
  logging?: false | ((sql: string) => void);
  /** Merged over the defaults below. */
  pool?: PoolOptions;
  /** Time allowed to open one connection; default 5000 ms. */
  connectTimeoutMs?: number;
}

export function createSequelize(url: string, opts: CreateSequelizeOptions = {}): Sequelize {
  const connectTimeoutMs = opts.connectTimeoutMs ?? 5_000;
  return new Sequelize(url, {
    dialect: 'postgres',
    // The driver itself, so Sequelize never resolves `pg` from the working directory.
    dialectModule: pg,
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
    dialectOptions: {
      // An unreachable server fails after this long instead of hanging on the TCP connect.
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
    },
  });
}
