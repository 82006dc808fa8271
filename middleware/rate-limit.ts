// clientRateLimit(): a per-caller request budget for the client routes, over express-rate-limit. A
// caller is its bearer token (kept only as a hash) or, without one, its IP (an IPv6 caller by subnet).
import { createHash } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit, type AugmentedRequest } from 'express-rate-limit';
import { HttpError, ToolgateConfigError } from '../src/errors';

export interface ClientRateLimitOptions {
  /** The window the budget is counted over, in milliseconds (1 second to 1 day). */
  windowMs: number;
  /** Requests a caller may make in one window. */
  limit: number;
}

/** A caller over its budget: the HTTP.md error shape, with when to retry. */
export class RateLimitedError extends HttpError {
  constructor(retryAfterSeconds: number) {
    super(
      429,
      'rate_limited',
      `Too many requests from this caller: retry in ${retryAfterSeconds} s, or spread the calls out.`,
      {},
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}

const MIN_WINDOW_MS = 1_000;
const MAX_WINDOW_MS = 24 * 60 * 60 * 1_000;
const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * @example
 * app.use('/api', clientRateLimit({ windowMs: 60_000, limit: 120 }));   // 120 requests a minute
 * app.use('/api', clientRateLimit(false));                              // off (tests)
 */
export function clientRateLimit(options: ClientRateLimitOptions | false): RequestHandler {
  if (options === false) {
    return function rateLimitOff(_req, _res, next) {
      next();
    };
  }
  const { windowMs, limit } = checkOptions(options);
  return rateLimit({
    windowMs,
    limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: callerKey,
    handler: function rejectOverBudget(req, _res, next) {
      next(new RateLimitedError(retryAfterSeconds(req, windowMs)));
    },
  });
}

const SETTING = /^(\d{1,9})\s*\/\s*(\d{1,9})\s*(ms|s|m|h)$/i;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/**
 * Reads the setting's text form (`TOOLGATE_RATE_LIMIT`): "<requests>/<window>" with the window in
 * ms, s, m or h ("120/60s", "1000/1h"), or "off". Throws a ToolgateConfigError naming the value.
 */
export function parseRateLimitSetting(text: string): ClientRateLimitOptions | false {
  const value = text.trim();
  if (value.toLowerCase() === 'off') return false;
  const match = SETTING.exec(value);
  if (!match) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_RATE_LIMIT_SETTING',
      `The rate limit ${JSON.stringify(text)} is not "<requests>/<window>": write e.g. "120/60s" or "1000/1h", or "off".`,
    );
  }
  return checkOptions({ limit: Number(match[1]), windowMs: Number(match[2]) * UNIT_MS[match[3].toLowerCase()] });
}

/** The bucket a request counts against: a hash of its bearer token, else its IP or IPv6 subnet. */
export function callerKey(req: Request): string {
  const token = BEARER.exec(req.get('authorization') ?? '')?.[1];
  if (token) return `token:${createHash('sha256').update(token, 'utf8').digest('base64url')}`;
  return `ip:${ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown')}`;
}

function retryAfterSeconds(req: Request, windowMs: number): number {
  const resetTime = (req as AugmentedRequest).rateLimit?.resetTime;
  const ms = resetTime ? resetTime.getTime() - Date.now() : windowMs;
  return Math.max(1, Math.ceil(ms / 1_000));
}

function checkOptions(options: unknown): ClientRateLimitOptions {
  const given = (options ?? {}) as Partial<Record<keyof ClientRateLimitOptions, unknown>>;
  const { windowMs, limit } = given;
  if (typeof windowMs !== 'number' || !Number.isInteger(windowMs) || windowMs < MIN_WINDOW_MS || windowMs > MAX_WINDOW_MS) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_RATE_LIMIT_WINDOW',
      `clientRateLimit({ windowMs: ${String(windowMs)} }) is not a window: give whole milliseconds from ${MIN_WINDOW_MS} to ${MAX_WINDOW_MS} (e.g. 60000), or pass false to turn the limit off.`,
    );
  }
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_RATE_LIMIT_LIMIT',
      `clientRateLimit({ limit: ${String(limit)} }) is not a budget: give a whole number of requests of at least 1 (e.g. 120), or pass false to turn the limit off.`,
    );
  }
  return { windowMs, limit };
}
