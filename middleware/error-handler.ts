// The one place errors become responses, in the HTTP.md shape {detail, code, ...}. A database that
// cannot be reached is a 503 (nothing granted); anything unexpected is a 500 with no stack trace.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { BaseError } from 'sequelize';
import { isDatabaseUnavailable } from '../src/db/unavailable';
import { HttpError, NotFoundError, UnavailableError } from '../src/errors';
import type { Logger } from '../src/logger';

export function notFoundHandler(): RequestHandler {
  return function routeNotFound(req, _res, next) {
    next(new HttpError(404, 'not_found', `No route ${req.method} ${req.path}: the README lists the routes.`));
  };
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return function renderError(err, req, res, next) {
    if (res.headersSent) return next(err);
    const error = toHttpError(err);
    if (error.status >= 500) {
      logger.error({ err: describe(err), request_id: req.id, method: req.method, path: req.path, status: error.status }, 'request failed');
    }
    res.status(error.status).set(error.headers).json({ detail: error.detail, code: error.code, ...error.extra, request_id: req.id });
  };
}

function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (isDatabaseUnavailable(err)) return new UnavailableError();
  // Express's own errors for bad requests (e.g. a malformed URL) carry a 4xx status.
  const status = (err as { status?: unknown; statusCode?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return status === 404 ? new NotFoundError('That resource') : new HttpError(status, 'bad_request', 'The request could not be read: check its URL, headers and body.');
  }
  return new HttpError(500, 'internal_error', 'Something went wrong on our side; nothing was granted. The request id identifies it in the logs.');
}

/**
 * What a failure log line says. A database error's message can quote the input that caused it, so
 * for those only the name and SQLSTATE are kept.
 */
function describe(err: unknown): Record<string, unknown> {
  if (err instanceof BaseError) return { name: err.name, code: (err as { parent?: { code?: unknown } }).parent?.code };
  if (err instanceof Error) return { name: err.name, message: err.message, stack: err.stack };
  return { value: typeof err };
}
