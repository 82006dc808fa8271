// One request through one middleware (or a short chain), in a bare Express app with toolgate's
// error handler: what it answered, or that it passed the request on, and the state it left in
// res.locals.toolgate. Middleware tests say what goes in and what comes out, nothing else.
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import request from 'supertest';
import { errorHandler } from '../../middleware/error-handler';
import type { ToolgateRequestState } from '../../middleware/request-state';

export interface HarnessRequest {
  method?: 'get' | 'post';
  path?: string;
  headers?: Record<string, string>;
  /** Sent as JSON, parsed by express.json() unless `raw` is set. */
  body?: unknown;
  /** Sent as is, with its Content-Type, for middleware that parses the body itself. */
  raw?: { contentType: string; text: string | Buffer };
  /** res.locals.toolgate as earlier middleware would have left it. */
  state?: ToolgateRequestState;
  /** Express route parameters, as `/agents/:id` would give them. */
  route?: string;
}

export interface HarnessAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** Whether the middleware called next() without an error. */
  passed: boolean;
  state: ToolgateRequestState | undefined;
}

const PASSED = 299;

export async function throughMiddleware(
  middleware: RequestHandler | readonly (RequestHandler | ErrorRequestHandler)[],
  given: HarnessRequest = {},
): Promise<HarnessAnswer> {
  let state: ToolgateRequestState | undefined;
  const app = express();
  if (!given.raw) app.use(express.json());
  app.use((_req, res, next) => {
    if (given.state) res.locals.toolgate = { ...given.state };
    next();
  });
  app[given.method ?? 'post'](given.route ?? '*path', ...(Array.isArray(middleware) ? middleware : [middleware]), (_req, res) => {
    state = res.locals.toolgate;
    res.status(PASSED).json({ passed: true });
  });
  app.use(errorHandler({ renderAll: true }));
  let call = request(app)[given.method ?? 'post'](given.path ?? '/');
  for (const [name, value] of Object.entries(given.headers ?? {})) call = call.set(name, value);
  const res = given.raw
    ? await call.set('Content-Type', given.raw.contentType).send(given.raw.text)
    : given.body === undefined
      ? await call
      : await call.send(given.body as object);
  return { status: res.status, headers: res.headers as Record<string, string>, body: res.body, passed: res.status === PASSED, state };
}
