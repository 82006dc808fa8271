// Who is calling, as the roles of HTTP.md: admin (everything), scheduler (scheduled runs), client
// (email, documents, tasks, chat), and metrics (GET /metrics, for a scraper that holds nothing else).
// The role comes from a bearer token (compared in constant time) or from the host's own
// authentication (roleOf); the client routes serve a caller with neither only when opened on purpose.
import { createHash, timingSafeEqual } from 'node:crypto';
import { inspect } from 'node:util';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { editDistance } from '../src/core/closest-tool';
import { isHostName } from '../src/core/host-name';
import { tokenDigest } from '../src/core/token-digest';
import { unreachableHostOf } from '../src/core/reachable-host';
import { OPTION_BOUNDS, OPTION_DEFAULTS } from '../src/option-bounds';
import {
  AuthenticationUnavailableError,
  ForbiddenError,
  HostNotAllowedError,
  ToolgateConfigError,
  UnauthenticatedError,
} from '../src/errors';
import { requestState, type AuthState, type Role } from './request-state';

export type { AuthState, Role } from './request-state';

export interface AuthOptions {
  adminToken?: string;
  schedulerToken?: string;
  clientTokens?: readonly string[];
  /** A token that reads GET /metrics and nothing else (the admin token reads it too). */
  metricsToken?: string;
  /**
   * `'open'` serves the client routes to callers with no token (the legacy behaviour); the default,
   * `'authenticated'`, serves them only to a client token or a caller `roleOf` gives a role.
   */
  clientRoutes?: ClientRoutes;
  /** The host's own authentication: the role of a request that carries no toolgate token. */
  roleOf?: RoleOf;
  /** With `clientRoutes: 'open'`: host names the router answers beside loopback names and IP addresses. */
  allowedHosts?: readonly string[];
}

export const CLIENT_ROUTES = ['open', 'authenticated'] as const;
export type ClientRoutes = (typeof CLIENT_ROUTES)[number];

/** What `roleOf` says of a request: a role, a role and who the caller is (a user id), or no one. */
export type RoleOfAnswer = Role | { role: Role; caller?: string | number } | null | undefined;
export type RoleOf = (req: Request) => RoleOfAnswer | Promise<RoleOfAnswer>;

/** Where a refusal or a fault of the host's roleOf is told (createToolgate's logger). */
export interface AuthHooks {
  onRoleOfError?(err: unknown): void;
}

const ROLES: readonly Role[] = ['admin', 'scheduler', 'client', 'metrics'];
const MIN_TOKEN_LENGTH = OPTION_BOUNDS.tokenLength;
const BEARER = /^Bearer ([^\s]+)$/i;

/** The token of an `Authorization: Bearer <token>` header; null for any other header or none. */
export function bearerTokenOf(header: string | undefined): string | null {
  return header === undefined ? null : (BEARER.exec(header.trim())?.[1] ?? null);
}

/** What is kept of a caller, for its Idempotency-Keys and its rate-limit budget: a digest, never the id itself. */
function callerOf(namespace: string, id: string): string {
  return createHash('sha256').update(`${namespace}\0${id}`, 'utf8').digest().subarray(0, 12).toString('hex');
}

/** The auth options once checked: each token's role and digest, and who the client routes serve. */
export interface CheckedAuth {
  tokens: readonly { role: Role; digest: Buffer }[];
  open: boolean;
  roleOf: RoleOf | undefined;
  allowedHosts: ReadonlySet<string>;
  /** No client token, no roleOf, not open: the client routes serve no one, and say what to configure. */
  clientAuthMissing: boolean;
}

/** Checks the tokens and the client routes' choice (createToolgate's options schema calls it); throws a ToolgateConfigError. */
export function checkAuthOptions(options: AuthOptions): CheckedAuth {
  const tokens: { role: Role; digest: Buffer }[] = [];
  const add = (role: Role, token: string | undefined) => {
    if (token === undefined) return;
    if (token.length < MIN_TOKEN_LENGTH) {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_WEAK_TOKEN',
        `The ${role} token is shorter than ${MIN_TOKEN_LENGTH} characters: use a long random value (openssl rand -hex 32).`,
      );
    }
    if (tokens.some((e) => timingSafeEqual(e.digest, tokenDigest(token)))) {
      throw new ToolgateConfigError('ERR_TOOLGATE_SHARED_TOKEN', `The ${role} token is also another role's token: give each role its own.`);
    }
    tokens.push({ role, digest: tokenDigest(token) });
  };
  add('admin', options.adminToken);
  add('scheduler', options.schedulerToken);
  for (const token of options.clientTokens ?? []) add('client', token);
  add('metrics', options.metricsToken);
  const { open, roleOf, allowedHosts } = checkClientAuth(options);
  return {
    tokens,
    open,
    roleOf,
    allowedHosts,
    clientAuthMissing: !open && roleOf === undefined && (options.clientTokens ?? []).length === 0,
  };
}

export function authenticate(auth: CheckedAuth, hooks: AuthHooks = {}): RequestHandler {
  const { tokens: entries, open, roleOf, allowedHosts, clientAuthMissing } = auth;

  return function authenticateCaller(req, res, next) {
    const state = requestState(res);
    const header = req.get('authorization');
    const token = bearerTokenOf(header);
    if (token !== null) {
      const presented = tokenDigest(token);
      // Compare against every token, always, so timing says nothing about which one matched.
      let role: Role | null = null;
      for (const entry of entries) if (timingSafeEqual(entry.digest, presented) && role === null) role = entry.role;
      if (role !== null) {
        state.auth = { role, anonymousClient: false, caller: presented.subarray(0, 12).toString('hex'), source: 'token' };
        return next();
      }
    }
    // Not a toolgate token: the host's own authentication decides, which may well be a bearer
    // token of its own (a JWT), a session cookie, or anything else.
    if (roleOf) return askRoleOf(roleOf, req, res, next, hooks);
    if (header !== undefined) {
      return next(
        new UnauthenticatedError(
          token !== null
            ? 'The bearer token is not one this service knows: check the token.'
            : 'The Authorization header must be "Bearer <token>".',
        ),
      );
    }
    if (open) {
      // Only a caller with no token is let in by the open mode, and only such a caller is a web page's
      // reach by DNS rebinding (a page knows no token): it must have asked for a name of this service.
      const refused = refusedHost(req, allowedHosts, 'client routes');
      if (refused) return next(refused);
    }
    state.auth = { role: null, anonymousClient: open, ...(clientAuthMissing ? { clientAuthMissing } : {}) };
    next();
  };
}

/** The Host check against DNS rebinding: the one rule of the open client routes and of tg.checkHost(). */
function refusedHost(req: Request, allowed: ReadonlySet<string>, where: 'client routes' | 'host route'): HostNotAllowedError | undefined {
  const refused = unreachableHostOf({ host: req.get('host'), forwardedHost: req.get('x-forwarded-host') }, allowed);
  return refused === null ? undefined : new HostNotAllowedError(refused, where);
}

export interface CheckHostOptions {
  /** Host names the route answers beside loopback names, IP addresses and the toolgate's own allowedHosts. */
  allowedHosts?: readonly string[];
}

/**
 * tg.checkHost(): the open client routes' Host check, for a host's own route that serves callers
 * with no credential (the README's example). toolgate cannot tell how a host authenticates its own
 * routes, so the host mounts it where it is wanted, and it refuses every other name, whatever the
 * request carries: a page that rebinds a name can send any header it likes.
 */
export function checkHost(auth: CheckedAuth, options: CheckHostOptions = {}): RequestHandler {
  const fail = (message: string) => new ToolgateConfigError('ERR_TOOLGATE_CHECK_HOST', message);
  if (typeof options !== 'object' || options === null || Object.keys(options).some((key) => key !== 'allowedHosts')) {
    throw fail(
      `tg.checkHost() takes { allowedHosts: [host names] } or nothing, not ${inspect(options, { breakLength: Infinity }).slice(0, 100)}.`,
    );
  }
  const names = options.allowedHosts === undefined ? [] : hostNamesOf(options.allowedHosts, 'tg.checkHost({ allowedHosts })', fail);
  const allowed = new Set([...auth.allowedHosts, ...names]);
  return function checkRequestHost(req, _res, next) {
    next(refusedHost(req, allowed, 'host route'));
  };
}

function askRoleOf(roleOf: RoleOf, req: Request, res: Response, next: NextFunction, hooks: AuthHooks): void {
  const refuse = (err: unknown) => {
    hooks.onRoleOfError?.(err);
    next(new AuthenticationUnavailableError());
  };
  const decide = (answer: RoleOfAnswer) => {
    const auth = authOfAnswer(answer);
    if (auth instanceof ToolgateConfigError) return next(auth);
    requestState(res).auth = auth;
    next();
  };
  let answer: RoleOfAnswer | Promise<RoleOfAnswer>;
  try {
    answer = roleOf(req);
  } catch (err) {
    return refuse(err);
  }
  // Most answers are at hand (a session or a verified JWT already on the request): no promise for them.
  if (answer !== null && typeof answer === 'object' && typeof (answer as PromiseLike<RoleOfAnswer>).then === 'function') {
    // Whatever goes wrong after the answer reaches the error handler: never an unhandled rejection.
    Promise.resolve(answer).then(decide, refuse).catch(next);
    return;
  }
  decide(answer as RoleOfAnswer);
}

/** An answer of roleOf as the request's auth state; anything that is not one is the host's mistake, refused. */
function authOfAnswer(answer: RoleOfAnswer): AuthState | ToolgateConfigError {
  if (answer === null || answer === undefined) return { role: null, anonymousClient: false, source: 'roleOf' };
  if (typeof answer === 'string' && ROLES.includes(answer)) return { role: answer, anonymousClient: false, caller: null, source: 'roleOf' };
  if (typeof answer === 'object' && ROLES.includes(answer.role)) {
    if (answer.caller === undefined) return { role: answer.role, anonymousClient: false, caller: null, source: 'roleOf' };
    // A user id as the host keeps it: a string, or a whole number (a database's integer id).
    const caller = typeof answer.caller === 'number' && Number.isSafeInteger(answer.caller) ? String(answer.caller) : answer.caller;
    if (typeof caller === 'string' && caller !== '')
      return { role: answer.role, anonymousClient: false, caller: callerOf('roleOf', caller), source: 'roleOf' };
  }
  const shown = inspect(answer, { depth: 2, breakLength: Infinity }).slice(0, 100);
  return new ToolgateConfigError(
    'ERR_TOOLGATE_ROLE_OF',
    `roleOf answered ${shown}: answer one of ${ROLES.map((r) => `'${r}'`).join(', ')}, { role, caller } with a non-empty caller id (a string or a whole number), or null for no one.`,
  );
}

function checkClientAuth(options: AuthOptions): { open: boolean; roleOf: RoleOf | undefined; allowedHosts: ReadonlySet<string> } {
  const fail = (message: string) => new ToolgateConfigError('ERR_TOOLGATE_CLIENT_AUTH', message);
  const { clientRoutes = OPTION_DEFAULTS.clientRoutes, roleOf, allowedHosts } = options;
  if (!(CLIENT_ROUTES as readonly unknown[]).includes(clientRoutes)) {
    const guess =
      typeof clientRoutes === 'string' ? CLIENT_ROUTES.find((mode) => editDistance(clientRoutes.toLowerCase(), mode, 2) <= 2) : undefined;
    throw fail(
      `createToolgate({ clientRoutes: ${JSON.stringify(clientRoutes)} }) is not a mode${guess ? `: did you mean "${guess}"?` : '.'} Give 'open' (anyone may call the client routes) or 'authenticated' (the default).`,
    );
  }
  if (roleOf !== undefined && typeof roleOf !== 'function') {
    throw fail(
      `createToolgate({ roleOf }) takes a function from a request to a role ('client', 'admin', ...) or null, not ${JSON.stringify(roleOf)}.`,
    );
  }
  const open = clientRoutes === 'open';
  if (open && (options.clientTokens ?? []).length > 0) {
    throw fail(
      "createToolgate({ clientRoutes: 'open' }) with clientTokens: a caller with no token would pass anyway. Drop clientTokens, or clientRoutes to require them.",
    );
  }
  if (open && roleOf !== undefined) {
    throw fail("createToolgate({ clientRoutes: 'open' }) with roleOf: a caller it refuses would pass anyway. Drop one of them.");
  }
  if (allowedHosts === undefined) return { open, roleOf, allowedHosts: new Set() };
  if (!open) {
    throw fail(
      "createToolgate({ allowedHosts }) applies only with clientRoutes: 'open' (it keeps web pages from reaching open routes by DNS rebinding): drop it, or open the client routes.",
    );
  }
  return { open, roleOf, allowedHosts: hostNamesOf(allowedHosts, 'createToolgate({ allowedHosts })', fail) };
}

/** A list of host names, lowercase; anything else is the ToolgateConfigError `fail` makes. */
function hostNamesOf(given: unknown, option: string, fail: (message: string) => ToolgateConfigError): Set<string> {
  if (!Array.isArray(given)) throw fail(`${option} takes a list of host names, not ${JSON.stringify(given)}.`);
  const names = new Set<string>();
  for (const host of given as readonly unknown[]) {
    if (typeof host !== 'string' || !isHostName(host.toLowerCase())) {
      throw fail(
        `${option}: ${JSON.stringify(host)} is not a host name: give names alone, such as toolgate.internal (no scheme, port or path).`,
      );
    }
    names.add(host.toLowerCase());
  }
  return names;
}

/** Admits the listed roles; a client route also admits anyone when the client routes are open. */
export function requireRole(...roles: Role[]): RequestHandler {
  const allowed = new Set<Role>(roles);
  return function checkRole(_req, res, next) {
    const auth = res.locals.toolgate?.auth;
    if (!auth)
      return next(new ToolgateConfigError('ERR_TOOLGATE_AUTH_ORDER', 'requireRole() runs after authenticate(): mount authenticate first.'));
    if (auth.role === null) {
      if (allowed.has('client') && auth.anonymousClient) return next();
      return next(new UnauthenticatedError(refusalFor(auth, allowed)));
    }
    if (auth.role === 'admin' || allowed.has(auth.role)) return next();
    const needed = [...allowed].join(' or ');
    if (auth.source === 'roleOf')
      return next(new ForbiddenError(`roleOf gives this caller the ${auth.role} role, which may not call this route: it needs ${needed}.`));
    next(new ForbiddenError(`The ${auth.role} token may not call this route: it needs the ${needed} token.`));
  };
}

function refusalFor(auth: { clientAuthMissing?: boolean; source?: string }, allowed: ReadonlySet<Role>): string | undefined {
  if (allowed.has('client') && auth.clientAuthMissing) {
    return "No client authentication is configured, so the client routes serve no one: give createToolgate clientTokens or roleOf (your app's own sign-in), or clientRoutes: 'open' to serve anyone; the service reads TOOLGATE_CLIENT_TOKENS.";
  }
  if (auth.source === 'roleOf') return 'This route needs a signed-in caller: sign in to the app, or send Authorization: Bearer <token>.';
  return undefined;
}
