// Tells a database that cannot be reached apart from a query that is wrong: the first is a 503
// (retry later, nothing granted), the second a bug. And a database that answers but lacks
// toolgate's tables (never migrated, or undone under a running service): a 503 of its own, which
// says to run the migrations.
import { ConnectionError, DatabaseError, TimeoutError } from 'sequelize';
import { TablesMissingError, UnavailableError } from '../errors';
import { BOOKKEEPING_TABLES, TOOLGATE_TABLES } from './toolgate-tables';

// SQLSTATE classes and codes that mean "the server is not there, is going away, or did not answer
// in time" (57014: a statement cancelled by statement_timeout).
const UNAVAILABLE_SQLSTATE = /^(08...|53...|57P0[1-4]|57014|3D000)$/;
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

export function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof ConnectionError || err instanceof TimeoutError) return true;
  const cause = err instanceof DatabaseError ? err.parent : err;
  if (!(cause instanceof Error)) return false;
  const code = (cause as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code))) return true;
  // node-postgres reports a dropped socket, and a query that got no answer (query_timeout), by message only.
  return /Connection terminated|connection is closed|Client has encountered a connection error|Query read timeout/i.test(cause.message);
}

const OWN_TABLES = new Set<string>([...TOOLGATE_TABLES.map((t) => t.name), ...BOOKKEEPING_TABLES]);
const MISSING_RELATION = /^relation "(?:[^"]*\.)?([^".]+)" does not exist/;
const MISSING_FUNCTION = /^function (?:[^ ]*\.)?(toolgate_\w+|toolkits_refuse_system_delete)\(/;

/**
 * The query named one of toolgate's own tables or functions, and the database has none of that
 * name (42P01, 42883); or toolgate's schema itself is gone (3F000). A missing table of any other
 * name is a bug, and stays a 500.
 */
export function isSchemaMissing(err: unknown): boolean {
  const cause = err instanceof DatabaseError ? err.parent : err;
  if (!(cause instanceof Error)) return false;
  const code = (cause as { code?: unknown }).code;
  if (code === '3F000') return true;
  if (code === '42P01') return OWN_TABLES.has(MISSING_RELATION.exec(cause.message)?.[1] ?? '');
  return code === '42883' && MISSING_FUNCTION.test(cause.message);
}

/**
 * Awaits toolgate's own database work and turns "cannot reach the database" into UnavailableError,
 * a 503 that says nothing was granted, so a host's app sees toolgate's error and not the driver's;
 * and toolgate's tables gone into TablesMissingError, a 503 that says to run the migrations.
 */
export async function orUnavailable<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (isDatabaseUnavailable(err)) throw new UnavailableError({ cause: err });
    if (isSchemaMissing(err)) throw new TablesMissingError({ cause: err });
    throw err;
  }
}
