// The dashboard's two CSRF checks, one for each side of signing in. Neither compares paths: each
// sits on the routes it guards, so whatever path Express routes to them (in any case, with or
// without a trailing slash) is checked.
import { createHmac } from 'node:crypto';
import cookieParser from 'cookie-parser';
import { doubleCsrf } from 'csrf-csrf';
import { csrfSync } from 'csrf-sync';
import type { Request, RequestHandler, Response } from 'express';
import { CsrfError } from '../../errors';

const SIGN_IN_COOKIE = '__Host-toolgate-sign-in';
const SIGN_IN_COOKIE_OPTIONS = { httpOnly: true, secure: true, sameSite: 'strict', path: '/' } as const;

function formToken(req: Request): string | undefined {
  const token = (req.body as Record<string, unknown> | undefined)?._csrf;
  return typeof token === 'string' ? token : undefined;
}

/**
 * After sign-in, every form carries its session's token (csrf-sync's synchronizer token pattern):
 * every POST that reaches this handler without it is refused (403), and each page reads its token
 * from `req.csrfToken()`. Mounted after `requireSignedIn`, so a form sent from a session that has
 * since ended hears that it is signed out (401), not that it looks forged.
 */
export function sessionCsrf(): RequestHandler {
  const { csrfSynchronisedProtection } = csrfSync({ getTokenFromRequest: formToken });
  return csrfSynchronisedProtection;
}

export interface SignInCsrf {
  /** Refuses (403) a sign-in form without its token, or whose token is not the twin of a cookie signed here. */
  check: RequestHandler;
  /** Sets up `token` and `check` on a request: reads the cookies. */
  readCookies: RequestHandler;
  /** A token for the sign-in form; its cookie goes with the answer (a good one the browser holds is kept). */
  token(req: Request, res: Response): string;
  /** Drops the cookie once signed in: the session's tokens take over. */
  forget(res: Response): void;
}

/**
 * Before sign-in there is no session, and none is stored for a visitor who only looks: the sign-in
 * form carries a signed double-submit token (csrf-csrf), its twin in a Secure, HttpOnly,
 * SameSite=Strict `__Host-` cookie. Another site's form cannot send that cookie, and a sibling
 * subdomain cannot plant one; the signature (keyed by the admin token) keeps anyone from making
 * up a pair.
 */
export function signInCsrf(adminToken: string): SignInCsrf {
  const { generateCsrfToken, validateRequest } = doubleCsrf({
    getSecret: () => createHmac('sha256', adminToken).update('toolgate dashboard sign-in form').digest('hex'),
    // Nothing identifies the visitor yet: the token is bound to the random value in its cookie.
    getSessionIdentifier: () => '',
    cookieName: SIGN_IN_COOKIE,
    cookieOptions: SIGN_IN_COOKIE_OPTIONS,
    getCsrfTokenFromRequest: formToken,
  });
  return {
    readCookies: cookieParser(),
    check: function checkSignInForm(req, _res, next) {
      next(validateRequest(req) ? undefined : new CsrfError());
    },
    token: (req, res) => generateCsrfToken(req, res),
    forget: (res) => {
      res.clearCookie(SIGN_IN_COOKIE, SIGN_IN_COOKIE_OPTIONS);
    },
  };
}
