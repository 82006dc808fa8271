// Signing in with the admin token, and out. The token is compared in constant time and never
// stored: the session only says that it was presented, and no session is stored before it was.
// Failed attempts are rate-limited per address, in the database when the toolgate counts callers
// there: five instances behind a load balancer then give an address one budget of wrong tokens, not
// five. A form that fails its CSRF check is refused before it is counted.
import { timingSafeEqual } from 'node:crypto';
import { Router, type Request, type RequestHandler } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import { tokenDigest } from '../../core/token-digest';
import { SignedOutError, TooManyWrongTokensError } from '../../errors';
import type { SignInCsrf } from './csrf';
import { textField } from './form-data';
import { renderPage } from './render';
import { SESSION_COOKIE } from './session';
import { SignInPage } from './views/sign-in';

const FAILED_SIGN_INS = { windowMs: 15 * 60 * 1000, limit: 10 };

export interface SignInOptions {
  adminToken: string;
  /** The sign-in form's CSRF token and check, which need no session. */
  formCsrf: SignInCsrf;
  /** The signed-in session's CSRF check, for the sign-out form. */
  sessionCsrf: RequestHandler;
  onSignIn(): void;
  /** Where failed attempts are counted (default: this process's memory). */
  failures?: Store;
}

export function signInRouter({ adminToken, formCsrf, sessionCsrf, onSignIn, failures }: SignInOptions): Router {
  const router = Router();
  const expected = tokenDigest(adminToken);
  const limitFailures = rateLimit({
    windowMs: FAILED_SIGN_INS.windowMs,
    limit: FAILED_SIGN_INS.limit,
    ...(failures ? { store: failures } : {}),
    skipSuccessfulRequests: true,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    handler: function tooManySignIns(_req, _res, next) {
      next(new TooManyWrongTokensError());
    },
  });

  router.get('/sign-in', formCsrf.readCookies, function showSignIn(req, res) {
    if (req.session.signedIn) return res.redirect(303, `${req.baseUrl}/agents`);
    renderPage(
      res,
      200,
      SignInPage({ base: req.baseUrl, csrfToken: formCsrf.token(req, res), next: safeNext(req, String(req.query.next ?? '')) }),
    );
  });

  router.post('/sign-in', formCsrf.readCookies, formCsrf.check, limitFailures, function signIn(req, res, next) {
    const presented = textField(req, 'token').trim();
    if (!timingSafeEqual(tokenDigest(presented), expected)) {
      res.status(401);
      return renderPage(
        res,
        401,
        SignInPage({
          base: req.baseUrl,
          csrfToken: formCsrf.token(req, res),
          error: presented === '' ? 'Enter the admin token.' : 'That is not the admin token. Check it and try again.',
        }),
      );
    }
    const to = safeNext(req, textField(req, 'next')) ?? `${req.baseUrl}/agents`;
    // A new session id on sign-in, so an id planted before it is worth nothing after.
    req.session.regenerate((err) => {
      if (err) return next(err);
      req.session.signedIn = true;
      req.session.save((saveErr) => {
        if (saveErr) return next(saveErr);
        onSignIn();
        formCsrf.forget(res);
        res.redirect(303, to);
      });
    });
  });

  // Signed out already (the session ended): nothing to end, and no session token to check.
  router.post('/sign-out', function signOutUnlessSignedIn(req, res, next) {
    if (req.session.signedIn) return next();
    res.redirect(303, `${req.baseUrl}/sign-in`);
  });
  router.post('/sign-out', sessionCsrf, function signOut(req, res, next) {
    req.session.destroy((err) => {
      if (err) return next(err);
      res.clearCookie(SESSION_COOKIE, { path: '/', secure: true, httpOnly: true, sameSite: 'strict' });
      res.redirect(303, `${req.baseUrl}/sign-in`);
    });
  });
  return router;
}

export function requireSignedIn(): RequestHandler {
  return function checkSignedIn(req, res, next) {
    if (req.session.signedIn) return next();
    if (req.method === 'GET') return res.redirect(303, `${req.baseUrl}/sign-in?next=${encodeURIComponent(req.originalUrl)}`);
    next(new SignedOutError());
  };
}

/** Only a dashboard page may be where sign-in leads: never another site. */
function safeNext(req: Request, next: string): string | undefined {
  if (!next.startsWith(`${req.baseUrl}/`) || next.startsWith('//') || /[\\\s]/.test(next)) return undefined;
  return next;
}
