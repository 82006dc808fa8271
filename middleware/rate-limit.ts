// clientRateLimit(): a per-caller request budget for the client routes, over express-rate-limit. A
// caller is who the host's roleOf says it is, else its bearer token (both kept only as a hash), else
// its IP (an IPv6 caller by subnet).
// Counts live in the store given (createToolgate gives one on PostgreSQL, shared by every instance),
// else in this process's memory.
import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit, type AugmentedRequest, type Store } from 'express-rate-limit';
import { tokenDigest } from '../src/core/token-digest';
import { RateLimitedError } from '../src/errors';
import { checkRateLimitOptions, type ClientRateLimitOptions } from '../src/rate-limit-options';
import { bearerTokenOf } from './auth';
import { stateOf } from './request-state';

export type { ClientRateLimitOptions };

/**
 * @example
 * app.use('/api', clientRateLimit({ windowMs: 60_000, limit: 120 }));   // 120 requests a minute
 * app.use('/api', clientRateLimit(false));                              // off (tests)
 * app.use('/api', clientRateLimit({ windowMs: 60_000, limit: 120 }, new PostgresRateLimitStore(sequelize)));
 */
export function clientRateLimit(options: ClientRateLimitOptions | false, store?: Store): RequestHandler {
  if (options === false) {
    return function rateLimitOff(_req, _res, next) {
      next();
    };
  }
  const { windowMs, limit } = checkRateLimitOptions(options);
  return rateLimit({
    windowMs,
    limit,
    ...(store ? { store } : {}),
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: callerKey,
    handler: function rejectOverBudget(req, _res, next) {
      next(new RateLimitedError(retryAfterSeconds(req, windowMs)));
    },
  });
}

/** The bucket a request counts against: the caller roleOf named, else a hash of its bearer token, else its IP or IPv6 subnet. */
export function callerKey(req: Request): string {
  // A user signed in to the host keeps one budget whatever token or address it comes with.
  const auth = stateOf(req)?.auth;
  if (auth?.source === 'roleOf' && auth.caller) return `caller:${auth.caller}`;
  const token = bearerTokenOf(req.get('authorization'));
  if (token) return `token:${tokenDigest(token).toString('base64url')}`;
  return `ip:${ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown')}`;
}

function retryAfterSeconds(req: Request, windowMs: number): number {
  const resetTime = (req as AugmentedRequest).rateLimit?.resetTime;
  const ms = resetTime ? resetTime.getTime() - Date.now() : windowMs;
  return Math.max(1, Math.ceil(ms / 1_000));
}
