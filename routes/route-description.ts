// What the API reference says about one route: beside each router, a list of these names its
// routes with the very zod schemas the handlers parse with. The OpenAPI document is built from
// these lists (routes/api-routes.ts), and a test fails for any route served but not described.
import type { z } from 'zod';
import type { Role } from '../middleware/auth';

export type Method = 'get' | 'post' | 'patch' | 'delete';

/**
 * Errors particular to a route. The others follow from the description itself: a token (401,
 * 403), a client route (429), an id in the path (404, 422), a query or a body (400, 413, 415,
 * 422), a token route's 503, and every route's 500.
 */
export type RouteError =
  | 'conflict'
  | 'sender_forbidden'
  | 'tool_forbidden'
  | 'approval_required'
  | 'cap_exceeded'
  | 'message_id_reused'
  | 'message_id_in_flight'
  | 'not_dispatchable'
  | 'upstream_error'
  | 'parity_mismatch'
  | 'schema_not_migrated'
  | 'migration_busy'
  | 'unavailable';

export interface RouteDescription {
  method: Method;
  /** As the router declares it, e.g. `/agents/:id/toolkits`; every `:param` is an id unless `params` says otherwise. */
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
  success: { status: number; description: string; schema?: z.ZodType };
  /** Other answers that are not errors (a call filed for approval: 202). */
  also?: readonly { status: number; description: string; schema?: z.ZodType }[];
  errors?: readonly RouteError[];
  /** Whether it takes an Idempotency-Key header (SEMANTICS §13): a route that can run a tool. */
  idempotent?: boolean;
}

export interface RouteGroupDescription {
  /** The heading the reference files these routes under. */
  tag: string;
  routes: readonly RouteDescription[];
}

/** Names a router's routes under one heading; the list is the router file's `...Routes` export. */
export function describeRoutes(tag: string, routes: readonly RouteDescription[]): RouteGroupDescription {
  return { tag, routes };
}
