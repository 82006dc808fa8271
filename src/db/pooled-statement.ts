// One statement on a connection of a Sequelize's pool, sent to node-postgres as it stands, its
// values as parameters, under a name that has PostgreSQL parse and plan it once per connection. For
// the statements every dispatched tool waits on (its `started` record and its outcome, SEMANTICS
// §8): through sequelize.query, its query building (the text parsed for replacements, the hooks, a
// stack trace kept per query) and the server's parsing and planning each time cost more than the
// statement's own work (docs/PERFORMANCE.md).
//
// What is kept of sequelize.query: the same pool (the same connections, with their search_path,
// statement_timeout and read timeout), the write side of a replicated setup, and a connection whose
// socket was lost is not handed out again. What is not: Sequelize's hooks and logging see no such
// statement, and an error is node-postgres's own (orUnavailable reads both kinds).
import type { Sequelize } from 'sequelize';
import { READ_TIMEOUT_MESSAGE } from './connect';

/** A statement, and the name its plan is kept under on each connection that runs it. */
export interface PooledStatement {
  text: string;
  name: string;
}

export interface PooledResult<R> {
  rows: R[];
  rowCount: number | null;
}

interface QueryConfig {
  text: string;
  name?: string;
  values: unknown[];
}

/** The little of a pooled node-postgres client used here: the callback form, which connect.ts's read-timeout guard wraps. */
interface PooledClient {
  query<R>(config: QueryConfig, callback: (err: Error | null, result?: PooledResult<R>) => void): void;
  /** Sequelize's mark of a connection not to hand out again (its pool checks it on the next acquire). */
  _invalid?: boolean;
}

interface ConnectionLending {
  getConnection(options: { type: 'read' | 'write' }): Promise<PooledClient>;
  releaseConnection(connection: PooledClient): void;
}

/**
 * The Sequelizes whose connections refused a named statement: behind a pooler in transaction mode
 * (PgBouncer without max_prepared_statements) a statement parsed on one server connection is not
 * there on the next, or another client's of the same name is. They send every statement unnamed.
 */
const unnamed = new WeakSet<Sequelize>();

/** A named statement the server does not have (26000), or already has from another client (42P05). */
const NAME_REFUSED = new Set(['26000', '42P05']);

/**
 * Runs `statement` with `values` on a connection of the pool, and hands the connection back. A
 * statement whose name the server refuses ran nothing (PostgreSQL refuses it at Parse or Bind,
 * before it executes), so it is sent again unnamed, as every later one on this Sequelize is.
 */
export async function pooledQuery<R>(sequelize: Sequelize, statement: PooledStatement, values: unknown[]): Promise<PooledResult<R>> {
  if (unnamed.has(sequelize)) return run<R>(sequelize, { text: statement.text, values });
  try {
    return await run<R>(sequelize, { ...statement, values });
  } catch (err) {
    if (!NAME_REFUSED.has(codeOf(err))) throw err;
    unnamed.add(sequelize);
    return run<R>(sequelize, { text: statement.text, values });
  }
}

async function run<R>(sequelize: Sequelize, config: QueryConfig): Promise<PooledResult<R>> {
  const lending = sequelize.connectionManager as unknown as ConnectionLending;
  const connection = await lending.getConnection({ type: 'write' });
  try {
    return await new Promise<PooledResult<R>>((resolve, reject) => {
      connection.query<R>(config, (err, result) => (err ? reject(err) : resolve(result!)));
    });
  } catch (err) {
    // As sequelize.query does: a connection whose answer never came, or whose socket was reset, is
    // in a state no one knows and must not serve another query.
    if (lostConnection(err)) connection._invalid = true;
    throw err;
  } finally {
    lending.releaseConnection(connection);
  }
}

function codeOf(err: unknown): string {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : '';
}

function lostConnection(err: unknown): boolean {
  return err instanceof Error && (err.message === READ_TIMEOUT_MESSAGE || codeOf(err) === 'ECONNRESET');
}
