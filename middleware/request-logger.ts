// requestLogger(): one structured line per request, once it is answered (or abandoned). Only what an
// operator needs to follow a request: never headers, tokens, bodies or query strings, which carry
// senders and message text.
import type { Request, RequestHandler } from 'express';
import type { ToolgateLogger } from '../src/toolgate-logger';
import type { Role } from './auth';

/** Paths are the caller's text: long ones are cut so a line stays a line. */
const MAX_PATH_LENGTH = 200;

export type RequestLogLine = {
  request_id: string | null;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  role: Role | null;
  /** true when the caller went away before the answer was sent. */
  aborted?: true;
};

/**
 * Mount after requestId(), before the routes.
 *
 * @example
 * app.use(requestId());
 * app.use(requestLogger(logger));
 */
export function requestLogger(logger: Required<Pick<ToolgateLogger, 'error' | 'info'>>): RequestHandler {
  return function logRequest(req, res, next) {
    const started = performance.now();
    let logged = false;
    const done = (aborted: boolean) => {
      if (logged) return;
      logged = true;
      const line: RequestLogLine = {
        request_id: res.locals.toolgate?.requestId ?? null,
        method: req.method,
        path: pathOf(req),
        status: res.statusCode,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
        role: res.locals.toolgate?.auth?.role ?? null,
        ...(aborted ? { aborted: true as const } : {}),
      };
      if (line.status >= 500) logger.error(line, 'request');
      else logger.info(line, 'request');
    };
    res.once('finish', () => done(false));
    res.once('close', () => done(!res.writableFinished));
    next();
  };
}

function pathOf(req: Request): string {
  const url = req.originalUrl ?? req.url;
  const end = url.search(/[?#]/);
  const path = end === -1 ? url : url.slice(0, end);
  return path.length > MAX_PATH_LENGTH ? `${path.slice(0, MAX_PATH_LENGTH)}…` : path;
}
