// A pg client of its own on a Sequelize's database, outside its pool: for what must stay on one
// session (an advisory lock, a LISTEN), which a pool could hand to different sessions or run out of.
import type { Sequelize } from 'sequelize';
import { pg, type PgClient } from './connect';

const PASSTHROUGH = ['ssl', 'connectionTimeoutMillis', 'keepAlive', 'options', 'application_name', 'client_encoding'];

export function dedicatedClient(sequelize: Sequelize, extra: Record<string, unknown> = {}): PgClient {
  const c = sequelize.config as typeof sequelize.config & { dialectOptions?: Record<string, unknown> };
  const d = c.dialectOptions ?? {};
  return new pg.Client({
    host: c.host,
    port: c.port ? Number(c.port) : undefined,
    database: c.database,
    user: c.username,
    password: c.password ?? undefined,
    ...Object.fromEntries(PASSTHROUGH.filter((k) => d[k] !== undefined).map((k) => [k, d[k]])),
    ...extra,
  });
}
