// Who may read /metrics: the bearer of the metrics token (TOOLGATE_METRICS_TOKEN, for a scraper that
// should hold nothing else) or of the admin token. Tokens compare in constant time, as auth.ts does.
// No token, or one this service does not know: 401. A client's or the scheduler's token: 403.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ForbiddenError, ToolgateConfigError, UnauthenticatedError } from '../src/errors';

export interface MetricsAccessOptions {
  /** A token that reads the metrics and nothing else; at least 16 characters. */
  metricsToken?: string;
  /** toolgate's bearer-token reader (it sets req.toolgate.auth, or fails with 401). */
  authenticate: RequestHandler;
}

const MIN_TOKEN_LENGTH = 16;
const BEARER = /^Bearer ([^\s]+)$/i;

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export function metricsAccess(options: MetricsAccessOptions): RequestHandler {
  const { metricsToken, authenticate } = options;
  if (metricsToken !== undefined && (typeof metricsToken !== 'string' || metricsToken.length < MIN_TOKEN_LENGTH)) {
    throw new ToolgateConfigError('ERR_TOOLGATE_WEAK_TOKEN', `The metrics token is shorter than ${MIN_TOKEN_LENGTH} characters: use a long random value (openssl rand -hex 32).`);
  }
  const metricsDigest = metricsToken === undefined ? undefined : digest(metricsToken);

  return function allowMetricsReader(req, res, next) {
    const presented = BEARER.exec(req.get('authorization')?.trim() ?? '')?.[1];
    if (presented !== undefined && metricsDigest !== undefined && timingSafeEqual(digest(presented), metricsDigest)) return next();
    authenticate(req, res, (err?: unknown) => {
      if (err) return next(err);
      const role = req.toolgate?.auth?.role ?? null;
      if (role === 'admin') return next();
      if (role === null) return next(new UnauthenticatedError('GET /metrics needs the metrics token or the admin token: send Authorization: Bearer <token>.'));
      next(new ForbiddenError(`The ${role} token may not read the metrics: use the metrics token or the admin token.`));
    });
  };
}
