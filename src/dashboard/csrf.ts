// Every dashboard form carries a token tied to the session (csrf-sync's synchronizer token
// pattern), in a hidden field `_csrf`; a POST without the session's token is refused (403).
import { csrfSync } from 'csrf-sync';
import type { RequestHandler } from 'express';

export function csrfProtection(): RequestHandler {
  const { csrfSynchronisedProtection } = csrfSync({
    getTokenFromRequest: (req) => {
      const token = (req.body as Record<string, unknown> | undefined)?._csrf;
      return typeof token === 'string' ? token : undefined;
    },
  });
  return csrfSynchronisedProtection;
}
