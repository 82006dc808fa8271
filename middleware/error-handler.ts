// The one place errors become responses, in the HTTP.md shape {detail, code, ...}. Two uses: the
// service renders every error (anything unexpected is a 500 with no stack trace); a host's app
// renders toolgate's own errors and passes every other error on to its own handlers.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { BaseError } from 'sequelize';
import { isDatabaseUnavailable, isSchemaMissing } from '../src/db/unavailable';
import {
  BadRequestError,
  HttpError,
  InternalError,
  MisconfiguredError,
  NotFoundError,
  RouteNotFoundError,
  TablesMissingError,
  ToolgateConfigError,
  UnavailableError,
} from '../src/errors';
import type { ToolgateLogger } from '../src/toolgate-logger';

export interface ErrorHandlerOptions {
  logger?: ToolgateLogger;
  /** true (the service): every error is answered; false (a host): errors not toolgate's go to next(). */
  renderAll?: boolean;
}

export function notFoundHandler(): RequestHandler {
  return function routeNotFound(req, _res, next) {
    next(new RouteNotFoundError(req.method, req.path));
  };
}

export function errorHandler(options: ErrorHandlerOptions = {}): ErrorRequestHandler {
  const { logger, renderAll = false } = options;
  return function renderError(err, req, res, next) {
    if (res.headersSent) return next(err);
    const error = toHttpError(err, renderAll);
    if (error === null) return next(err);
    const requestId = res.locals.toolgate?.requestId;
    if (error.status >= 500) {
      logger?.error(
        { err: errorFields(err), request_id: requestId ?? null, method: req.method, path: req.baseUrl + req.path, status: error.status },
        'request failed',
      );
    }
    res
      .status(error.status)
      .set(error.headers)
      .json({ detail: error.detail, code: error.code, ...error.extra, ...(requestId ? { request_id: requestId } : {}) });
  };
}

function toHttpError(err: unknown, renderAll: boolean): HttpError | null {
  if (err instanceof HttpError) return err;
  // A mounting mistake (toolRun() with no body parser, no run on the request): loud, and the
  // sentence says what to change. It is the operator's to fix, not the caller's.
  if (err instanceof ToolgateConfigError) return new MisconfiguredError(err);
  if (!renderAll) return null;
  if (isDatabaseUnavailable(err)) return new UnavailableError();
  if (isSchemaMissing(err)) return new TablesMissingError();
  // Express's own errors for bad requests (e.g. a malformed URL) carry a 4xx status.
  const status = (err as { status?: unknown; statusCode?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return status === 404 ? new NotFoundError('That resource') : new BadRequestError(status);
  }
  return new InternalError();
}

/**
 * What a failure log line says. A database error's message can quote the input that caused it, so
 * for those only the name and SQLSTATE are kept.
 */
/** What the log keeps of an error: a database error's name and code (never its SQL or values), else its name, message and stack. */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof BaseError) return { name: err.name, code: (err as { parent?: { code?: unknown } }).parent?.code };
  if (err instanceof Error) return { name: err.name, message: err.message, stack: err.stack };
  return { value: typeof err };
}
