// Every dashboard form carries a token tied to the session (csrf-sync's synchronizer token
// pattern), in a hidden field `_csrf`; a signed-in session's POST without its token is refused (403).
import { csrfSync } from 'csrf-sync';
import type { RequestHandler } from 'express';

export function csrfProtection(): RequestHandler {
  const { csrfSynchronisedProtection } = csrfSync({
    getTokenFromRequest: (req) => {
      const token = (req.body as Record<string, unknown> | undefined)?._csrf;
      return typeof token === 'string' ? token : undefined;
    },
  });
  // A form sent from a session that has since ended has no token to match: what the operator must
  // hear is that they are signed out (requireSignedIn says so, and nothing runs), not that the form
  // looks forged. The sign-in form itself is always checked, so nobody can be signed in by another site.
  return function checkCsrf(req, res, next) {
    if (req.method === 'POST' && !req.session?.signedIn && req.path !== '/sign-in') return next();
    csrfSynchronisedProtection(req, res, next);
  };
}
