// What the dashboard answers when a page cannot be shown: the same statuses as the API, as a page
// that says what happened and what to do, in plain words.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { isDatabaseUnavailable, isSchemaMissing } from '../../db/unavailable';
import { CsrfError, HttpError, NotFoundError, PageNotFoundError, TablesMissingError } from '../../errors';
import type { ServiceLogger } from '../logger';
import { renderPage } from './render';
import { ErrorPage } from './views/error-page';

export function dashboardNotFound(): RequestHandler {
  return function pageNotFound(req, _res, next) {
    next(new PageNotFoundError(req.originalUrl));
  };
}

export function dashboardErrors(logger: ServiceLogger): ErrorRequestHandler {
  return function renderDashboardError(err, req, res, next) {
    if (res.headersSent) return next(err);
    const error = toPageError(err);
    if (error.status >= 500)
      logger.error(
        { err: err instanceof Error ? { name: err.name, message: err.message } : typeof err, path: req.path },
        'dashboard page failed',
      );
    renderPage(
      res,
      error.status,
      ErrorPage({ base: req.baseUrl, status: error.status, message: error.message, signedIn: req.session?.signedIn === true }),
    );
  };
}

function toPageError(err: unknown): { status: number; message: string } {
  if ((err as { code?: unknown }).code === 'EBADCSRFTOKEN') return new CsrfError();
  if (err instanceof NotFoundError) return { status: 404, message: err.message.replace(': check the id in the path.', '.') };
  if (err instanceof HttpError) return err;
  if (isDatabaseUnavailable(err))
    return { status: 503, message: 'The database cannot be reached right now; nothing was changed. Try again in a few seconds.' };
  if (isSchemaMissing(err)) return new TablesMissingError();
  const status = (err as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500)
    return { status, message: 'The request could not be read. Go back and try again.' };
  return {
    status: 500,
    message: 'Something went wrong on our side; nothing was changed that the page does not show. The logs have the details.',
  };
}
