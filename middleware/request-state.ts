// Everything toolgate keeps for a request lives under one entry, `res.locals.toolgate`, so it never
// collides with a host's own state (express-oauth2-jwt-bearer's `req.auth`, a `req.id`) and adds
// nothing to the request object. Not on `req`: Express gives every request object a hidden class of
// its own (it sets the prototype per request), so V8 copies that class for each property added to a
// request, microseconds a request; `res.locals` is the plain per-request table Express makes for this.
import type { Request, Response } from 'express';
import type { SenderAuthentication } from '../src/core/sender-authentication';
import type { ToolRun } from '../src/run/tool-run';
import type { HeldKey } from '../src/services/idempotency-keys';

/** The roles of the bearer tokens (HTTP.md, "Who may call"). */
export type Role = 'admin' | 'scheduler' | 'client' | 'metrics';

export interface AuthState {
  /** The caller's role, or null for no one (no token, and no role from roleOf). */
  role: Role | null;
  /** True when the client routes are open (`clientRoutes: 'open'`), so a caller with no role may call them. */
  anonymousClient: boolean;
  /**
   * Who called, for what is kept per caller (Idempotency-Key, the rate limit): a digest of the
   * token, or of the caller id roleOf gave; null when there is neither.
   */
  caller?: string | null;
  /** Who decided the role: a toolgate token, or the host's roleOf (also when it said no one). */
  source?: 'token' | 'roleOf';
  /** Set when no client authentication is configured at all, so a client route's 401 says what to configure. */
  clientAuthMissing?: boolean;
}

export interface ToolgateRequestState {
  /** The caller's role, set by toolgate's router from the bearer token. */
  auth?: AuthState;
  /** The run resolved by toolRun(); read it with currentRun(req). */
  run?: ToolRun;
  /** Why the sender did or did not count, set by authenticatedSender(). */
  senderAuthentication?: SenderAuthentication;
  /** The request's id, set by the service's requestId() and carried into logs and error bodies. */
  requestId?: string;
  /** The Idempotency-Key this request claimed, set by idempotencyKey(): a route may keep its answer with its call's outcome. */
  heldKey?: HeldKey;
}

declare global {
  namespace Express {
    interface Locals {
      toolgate?: ToolgateRequestState;
    }
  }
}

/** The request's toolgate state, made on first use. */
export function requestState(res: Response): ToolgateRequestState {
  return (res.locals.toolgate ??= {});
}

/** What toolgate has kept for a request so far, for code that holds the request alone. */
export function stateOf(req: Request): ToolgateRequestState | undefined {
  return req.res?.locals.toolgate;
}
