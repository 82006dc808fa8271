// The dashboard's cookie is Secure, so a browser keeps it only over HTTPS, or from a loopback
// address, which browsers treat as a secure context. Anywhere else, signing in could never work
// (and would send the admin token in clear), so the dashboard says what to change instead.
import type { Request, RequestHandler } from 'express';
import { isLoopbackAddress, isLoopbackHost } from '../../core/reachable-host';
import { InsecureDashboardError } from '../../errors';

export function requireSecureContext(): RequestHandler {
  return function checkSecureContext(req, _res, next) {
    if (!isSecureContext(req)) return next(new InsecureDashboardError());
    // express-session writes a Secure cookie only when it believes the request is HTTPS, which it
    // reads (with `proxy: true`) from this header alone. Set here from our own verdict, so a
    // caller's own X-Forwarded-Proto never decides it.
    req.headers['x-forwarded-proto'] = 'https';
    next();
  };
}

/** HTTPS (directly, or from a proxy trusted with TOOLGATE_TRUST_PROXY), or loopback end to end. */
export function isSecureContext(req: Request): boolean {
  if (req.secure) return true;
  return isLoopbackAddress(req.socket.remoteAddress) && isLoopbackHost(req.hostname);
}
