// Bearer tokens and the roles of HTTP.md: admin (everything), scheduler (scheduled runs), client
// (email, documents, tasks, chat), and metrics (GET /metrics, for a scraper that holds nothing else). Tokens are compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ForbiddenError, ToolgateConfigError, UnauthenticatedError } from '../src/errors';
import { requestState, type Role } from './request-state';

export type { AuthState, Role } from './request-state';

export interface AuthOptions {
  adminToken?: string;
  schedulerToken?: string;
  clientTokens?: readonly string[];
  /** A token that reads GET /metrics and nothing else (the admin token reads it too). */
  metricsToken?: string;
}

const MIN_TOKEN_LENGTH = 16;

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export function authenticate(options: AuthOptions): RequestHandler {
  const entries: { role: Role; digest: Buffer }[] = [];
  const add = (role: Role, token: string | undefined) => {
    if (token === undefined) return;
    if (token.length < MIN_TOKEN_LENGTH) {
      throw new ToolgateConfigError('ERR_TOOLGATE_WEAK_TOKEN', `The ${role} token is shorter than ${MIN_TOKEN_LENGTH} characters: use a long random value (openssl rand -hex 32).`);
    }
    if (entries.some((e) => timingSafeEqual(e.digest, digest(token)))) {
      throw new ToolgateConfigError('ERR_TOOLGATE_SHARED_TOKEN', `The ${role} token is also another role's token: give each role its own.`);
    }
    entries.push({ role, digest: digest(token) });
  };
  add('admin', options.adminToken);
  add('scheduler', options.schedulerToken);
  for (const token of options.clientTokens ?? []) add('client', token);
  add('metrics', options.metricsToken);
  const clientRoutesOpen = (options.clientTokens ?? []).length === 0;

  return function authenticateBearer(req, res, next) {
    const header = req.get('authorization');
    if (header === undefined) {
      requestState(res).auth = { role: null, anonymousClient: clientRoutesOpen };
      return next();
    }
    const match = /^Bearer ([^\s]+)$/i.exec(header.trim());
    if (!match) return next(new UnauthenticatedError('The Authorization header must be "Bearer <token>".'));
    const presented = digest(match[1]);
    // Compare against every token, always, so timing says nothing about which one matched.
    let role: Role | null = null;
    for (const entry of entries) if (timingSafeEqual(entry.digest, presented) && role === null) role = entry.role;
    if (role === null) return next(new UnauthenticatedError('The bearer token is not one this service knows: check the token.'));
    requestState(res).auth = { role, anonymousClient: false, caller: presented.subarray(0, 12).toString('hex') };
    next();
  };
}

/** Admits the listed roles; a client route also admits anyone while no client token is set. */
export function requireRole(...roles: Role[]): RequestHandler {
  const allowed = new Set<Role>(roles);
  return function checkRole(_req, res, next) {
    const auth = res.locals.toolgate?.auth;
    if (!auth) return next(new ToolgateConfigError('ERR_TOOLGATE_AUTH_ORDER', 'requireRole() runs after authenticate(): mount authenticate first.'));
    if (auth.role === null) {
      if (allowed.has('client') && auth.anonymousClient) return next();
      return next(new UnauthenticatedError());
    }
    if (auth.role === 'admin' || allowed.has(auth.role)) return next();
    next(new ForbiddenError(`The ${auth.role} token may not call this route: it needs the ${[...allowed].join(' or ')} token.`));
  };
}
