// Tells a database that cannot be reached apart from a query that is wrong: the first is a 503
// (retry later, nothing granted), the second a bug.
import { ConnectionError, DatabaseError, TimeoutError } from 'sequelize';
import { UnavailableError } from '../errors';

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

/**
 * Awaits toolgate's own database work and turns "cannot reach the database" into UnavailableError,
 * a 503 that says nothing was granted, so a host's app sees toolgate's error and not the driver's.
 */
export async function orUnavailable<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw isDatabaseUnavailable(err) ? new UnavailableError({ cause: err }) : err;
  }
}
