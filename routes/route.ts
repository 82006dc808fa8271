// One declaration per route: what the reference says of it (method, path, roles, parameters,
// query, body, answers, errors) and how it is served. mountRoutes() serves each declaration with
// its checks in one order, and the OpenAPI document reads the very same objects, so a route cannot
// be served one way and described another.
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import type { RouteOf } from '../middleware/idempotency-key';
import { unreadNonJsonBody } from '../middleware/json-body';
import type { Role } from '../middleware/request-state';
import { AnswerMismatchError, InputTooComplexError, ValidationError, type ErrorCode } from '../src/errors';
import { parse, pathId, type Parsed } from '../src/http/parse';
import { routeGuard } from './route-guard';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * Errors particular to a route. The others follow from the declaration itself: a token (401,
 * 403), a client route (429), an id in the path (404, 422), a query or a body (400, 413, 415,
 * 422), a token route's 503, and every route's 500.
 */
export type RouteError = Extract<
  ErrorCode,
  | 'conflict'
  | 'no_candidate'
  | 'sender_forbidden'
  | 'tool_forbidden'
  | 'approval_required'
  | 'cap_exceeded'
  | 'message_id_reused'
  | 'message_id_in_flight'
  | 'not_dispatchable'
  | 'upstream_error'
  | 'invalid_cursor'
  | 'cursor_expired'
  | 'parity_mismatch'
  | 'schema_not_migrated'
  | 'migration_busy'
  | 'unavailable'
>;

/** What the reference needs of a route: everything but how it is served. */
export interface RouteDescription {
  method: Method;
  /** As Express reads it, e.g. `/agents/:id/toolkits`; every `:param` is an id unless `params` says otherwise. */
  path: string;
  /** Path parameters that are not ids, with their schemas. */
  params?: Record<string, z.ZodType>;
  summary: string;
  description?: string;
  /** Who may call: the roles (the admin token may call every route), or anyone, with no token. */
  roles: readonly Role[] | 'anyone';
  query?: z.ZodType;
  body?: z.ZodType;
  /** Whether a request must carry the body. Default: true when `body` is given. */
  bodyRequired?: boolean;
  /**
   * The answer. `schema` is JSON's unless `contentType` says otherwise (one line's, for NDJSON);
   * `headers` names the headers it carries, each with what it says.
   */
  success: { status: number; description: string; schema?: z.ZodType; contentType?: string; headers?: Record<string, string> };
  /** Other answers that are not errors (a call filed for approval: 202). */
  also?: readonly { status: number; description: string; schema?: z.ZodType }[];
  errors?: readonly RouteError[];
  /** Whether it takes an Idempotency-Key header (SEMANTICS §13): a route that can run a tool. */
  idempotent?: boolean;
}

/** `'/agents/:id/documents/:docId'` → `'id' | 'docId'`. */
type ParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** What a handler gets: the request's parts, each already checked against the declaration. */
export interface RouteInput<P extends string, Q, B> {
  req: Request;
  res: Response;
  /** The path's ids (canonical decimal, else a 422; past any row's id, a 404). */
  ids: Record<ParamNames<P>, number>;
  /** The path's other parameters, parsed by their `params` schemas. */
  params: Record<string, unknown>;
  query: Q;
  /**
   * The body as its schema parsed it (`req.body` stays as sent). A service handed it takes it as it
   * stands; what the service refuses beyond the schema, it says where in the value, and the route
   * puts that under `body`.
   */
  body: B;
}

export interface Route<
  S,
  P extends string = string,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> extends RouteDescription {
  path: P;
  query?: Q;
  body?: B;
  /** Middleware between the checks and the handler: the run (`tg.toolRun()`), a gate tool. */
  use?(tg: S): RequestHandler[];
  /**
   * Answers with what it returns: JSON with the success status, or no content when it returns
   * nothing; PASS hands the request on. A handler that answers otherwise (another status, text, a
   * file) answers through `res` before it returns.
   */
  handle(tg: S, input: RouteInput<P, z.output<Q>, Parsed<B>>): unknown;
}

/** What the reference reads of a section: its heading and its routes' descriptions. */
export interface DescribedSection {
  tag: string;
  routes: readonly RouteDescription[];
}

/** A heading of the reference and the routes under it, in the order the reference shows them. */
export interface RouteSection<S = never> {
  tag: string;
  routes: readonly Route<S>[];
}

/**
 * Declares a section's routes for services S. Each route is one call of `route`, so TypeScript infers
 * its path's ids and its query's and body's types for the handler.
 */
export function routeSection<S>(
  tag: string,
  declare: (
    route: <P extends string, Q extends z.ZodType = z.ZodNever, B extends z.ZodType = z.ZodNever>(r: Route<S, P, Q, B>) => Route<S>,
  ) => readonly Route<S>[],
): RouteSection<S> {
  return { tag, routes: declare((r) => r as unknown as Route<S>) };
}

/**
 * What serving a route needs besides its handler's services: who may call, and retries made safe.
 * A section whose routes need none of them (the reference, the health checks) is mounted with none.
 */
export interface MountServices {
  requireRole?(...roles: Role[]): RequestHandler;
  /** The Idempotency-Key middleware for a route, scoped by the route as declared (routeOf), never the path as spelled. */
  idempotencyKey?(routeOf: RouteOf): RequestHandler;
  /**
   * Reads the bearer token before each route that has roles. toolgate's router reads it once for
   * all its routes; the service's own routes outside it (/metrics) read it here.
   */
  authenticate?: RequestHandler;
  /**
   * Whether each JSON answer is parsed with the schema its route declares for its status, and held
   * back as a 500 answer_mismatch when it breaks it. Default: on under the tests (NODE_ENV=test),
   * so every test's answer is checked against what the reference says; off in service.
   */
  checkAnswers?: boolean;
}

/**
 * A router serving the section's routes, each with its checks in one order: the role; the path's
 * ids and parameters; the query; the body; the Idempotency-Key; the route's own middleware (the
 * run); the handler. Refusals of malformed input come before anything is read or run.
 */
export function mountRoutes<S>(section: RouteSection<S>, tg: S, mount: MountServices = {}): Router {
  const router = Router();
  const mayServe = routeGuard(section.routes);
  // A request none of the section's routes can serve leaves its router at once (routes/route-guard.ts).
  if (mayServe)
    router.use(function sectionGuard(req, _res, next) {
      next(mayServe(req) ? undefined : 'router');
    });
  for (const route of section.routes) {
    const chain: RequestHandler[] = [];
    if (route.roles !== 'anyone') {
      if (!mount.requireRole) throw new Error(`${route.method.toUpperCase()} ${route.path} has roles: mount it with requireRole.`);
      if (mount.authenticate) chain.push(mount.authenticate);
      chain.push(mount.requireRole(...route.roles));
    }
    chain.push(checkInput(route));
    if (route.idempotent) {
      if (!mount.idempotencyKey)
        throw new Error(`${route.method.toUpperCase()} ${route.path} takes an Idempotency-Key: mount it with idempotencyKey.`);
      chain.push(mount.idempotencyKey(declaredRouteOf(route)));
    }
    chain.push(...(route.use?.(tg) ?? []));
    chain.push(answer(route, tg, mount.checkAnswers ?? process.env.NODE_ENV === 'test'));
    router[route.method](route.path, ...chain);
  }
  return router;
}

interface CheckedInput {
  ids: Record<string, number>;
  params: Record<string, unknown>;
  query: unknown;
  body: unknown;
}

const checked = new WeakMap<Request, CheckedInput>();

function checkInput(route: RouteDescription): RequestHandler {
  const names = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
  const ids = names.filter((name) => !route.params?.[name]);
  return function checkRouteInput(req, _res, next) {
    const input: CheckedInput = { ids: {}, params: {}, query: undefined, body: undefined };
    for (const name of ids) input.ids[name] = pathId(req.params, name);
    for (const [name, schema] of Object.entries(route.params ?? {})) input.params[name] = parse(schema, req.params[name], ['path', name]);
    if (route.query) input.query = parse(route.query, req.query, 'query');
    if (route.body) {
      // A body sent as something else (curl -d's form) was never read: say so, not "no body".
      const notJson = unreadNonJsonBody(req);
      if (notJson) throw notJson;
      input.body = parse(route.body, req.body === undefined && route.bodyRequired === false ? {} : req.body, 'body');
    }
    checked.set(req, input);
    next();
  };
}

/**
 * The route a request reached, as declared: its method, its mount, and its pattern with each
 * parameter as checkInput read it (an id as its canonical number). Express matched the path
 * regardless of case and of a trailing slash, and decoded its parameters (`%31` is 1), so those
 * spellings are one route here. The mount is the one part Express does not declare to a router:
 * it is taken as matched, in lower case, which Express's case-insensitive matching makes one
 * mount. The path as declared gives the scope earlier versions stored, so keys kept before an
 * upgrade still replay.
 */
function declaredRouteOf(route: RouteDescription): RouteOf {
  const method = route.method.toUpperCase();
  return (req) => {
    const input = checked.get(req);
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_match, name: string) => {
      const id = input?.ids[name];
      return id === undefined ? encodeURIComponent(String(input?.params[name] ?? req.params[name])) : String(id);
    });
    return `${method} ${req.baseUrl.toLowerCase()}${path}`;
  };
}

function answer<S>(route: Route<S>, tg: S, checkAnswers: boolean): RequestHandler {
  return async function answerRoute(req, res, next) {
    const input = checked.get(req)!;
    if (checkAnswers) checkAnswersOf(route, res);
    const value = await located(route, () =>
      route.handle(tg, { req, res, ids: input.ids, params: input.params, query: input.query, body: input.body as Parsed<z.ZodType> }),
    );
    if (value === PASS) return next();
    if (res.headersSent) return;
    if (value === undefined) res.status(route.success.status).end();
    else res.status(route.success.status).json(value);
  };
}

/** Runs the handler; what a service refused of the body it was handed (unlocated) is put under `body`. */
async function located(route: RouteDescription, handle: () => unknown): Promise<unknown> {
  try {
    return await handle();
  } catch (err) {
    if (route.body && (err instanceof ValidationError || err instanceof InputTooComplexError) && !err.located) throw err.at('body');
    throw err;
  }
}

/**
 * Parses each JSON answer as sent (after JSON.stringify, so a Date is its string) with the schema
 * declared for its status: `success`, or one of `also`. Errors and answers with no schema pass.
 * An NDJSON answer's schema is one line's: each line written is parsed, and a line that breaks it
 * cuts the answer off (its status is sent by then), so the test reading it fails.
 */
function checkAnswersOf(route: RouteDescription, res: Response): void {
  const mismatch = (issues: z.core.$ZodIssue[]) =>
    new AnswerMismatchError(
      `${route.method.toUpperCase()} ${route.path}`,
      issues.map((i) => ({ loc: i.path.map(String), msg: i.message, type: i.code })),
    );
  if (route.success.contentType === 'application/x-ndjson' && route.success.schema) {
    const line = route.success.schema;
    const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      for (const text of String(chunk).split('\n').filter(Boolean)) {
        const result = line.safeParse(JSON.parse(text));
        if (!result.success) throw mismatch(result.error.issues);
      }
      return write(chunk, ...rest);
    }) as Response['write'];
  }
  const send = res.json.bind(res);
  res.json = (body: unknown) => {
    const declared =
      res.statusCode === route.success.status && route.success.contentType === undefined
        ? route.success.schema
        : route.also?.find((a) => a.status === res.statusCode)?.schema;
    if (declared && body !== undefined) {
      const result = declared.safeParse(JSON.parse(JSON.stringify(body)));
      if (!result.success) throw mismatch(result.error.issues);
    }
    return send(body);
  };
}

/** What a handler returns to pass the request on, as if the route had not matched (an asset the reference does not serve). */
export const PASS: unique symbol = Symbol('pass');

/** The body the route's declaration parsed (for middleware that reads the message, such as a run's `runOf`). */
export function parsedBody<S extends z.ZodType>(req: Request, _schema: S): z.output<S> {
  return checked.get(req)?.body as z.output<S>;
}
