// idempotencyKey(keys): the Idempotency-Key header on a POST that can run a tool (SEMANTICS §13).
// The first request with a key runs, and its answer is kept (24 hours at least); a retry with the
// same key and the same body gets that answer (same status, same body, Idempotent-Replayed: true)
// and runs nothing; with another body, a 422; while the first still runs, a 409. Keys are the
// caller's own (per token) and the route's: the route as declared, whatever spelling of its path
// Express matched (routing is case-insensitive and a trailing slash is optional), so one key is one
// request on every spelling. A first request that fails before anything ran (a 5xx) lets its key go,
// so its retry runs.
import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { canonicalJson } from '../src/core/canonical-json';
import { orUnavailable } from '../src/db/unavailable';
import { IdempotencyKeyReusedError, InFlightError, InterruptedError, ValidationError } from '../src/errors';
import type { HeldKey, IdempotencyKeys } from '../src/services/idempotency-keys';
import { requestState } from './request-state';

const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The route a request reached, as its declaration says it, e.g. `POST /api/agents/1/tool-calls`: the
 * method, the mount and the declared pattern with its parameters canonical. Only the mount's and the
 * route's declarations know it (routes/route.ts), so they hand it in.
 */
export type RouteOf = (req: Request) => string;

export function idempotencyKey(keys: IdempotencyKeys, routeOf: RouteOf): RequestHandler {
  return async function idempotentRequest(req, res, next) {
    const key = req.get('idempotency-key');
    if (key === undefined) return next();
    if (!KEY.test(key)) {
      throw new ValidationError([
        {
          loc: ['header', 'Idempotency-Key'],
          msg: 'an Idempotency-Key is 1 to 255 printable ASCII characters, such as a UUID',
          type: 'invalid_idempotency_key',
        },
      ]);
    }
    // Keys are the caller's own: its token's, or the user's roleOf named. Callers roleOf let in
    // without naming them share one scope, as holders of one client token do, never the anonymous one.
    const auth = res.locals.toolgate?.auth;
    const scope = `${auth?.caller ?? (auth?.source === 'roleOf' ? 'roleOf' : 'anonymous')} ${routeOf(req)}`;
    const hash = createHash('sha256')
      .update(canonicalJson(req.body ?? null))
      .digest('hex');
    // One statement claims the key, or reads it as the request that holds it left it.
    const claim = await orUnavailable(keys.claim(scope, key, hash));
    if (claim.claimed) {
      const held: HeldKey = { scope, key, kept: null };
      requestState(res).heldKey = held;
      keepAnswer(res, keys, held);
      return next();
    }
    const stored = claim.stored;
    if (stored === null) throw new InFlightError('idempotency_key_in_flight', 'Idempotency-Key');
    if (stored.request_hash !== hash) throw new IdempotencyKeyReusedError();
    if (stored.state === 'done' && stored.status !== null) {
      res.set('Idempotent-Replayed', 'true');
      res.status(stored.status).json(stored.body);
      return;
    }
    if (stored.holder_alive) throw new InFlightError('idempotency_key_in_flight', 'Idempotency-Key');
    // The instance that held it stopped mid-request: what ran is on record, and nothing runs again.
    const interrupted = new InterruptedError();
    await orUnavailable(keys.answer(scope, key, interrupted.status, { detail: interrupted.message, code: interrupted.code }));
    throw interrupted;
  };
}

/**
 * Keeps the answer before it is sent, so a retry that follows it finds it; a 5xx lets the key go.
 * An answer the route kept already, with its call's outcome (held.kept), goes out as it is.
 */
function keepAnswer(res: Response, keys: IdempotencyKeys, held: HeldKey): void {
  const { scope, key } = held;
  const send = res.json.bind(res);
  res.json = (body: unknown) => {
    const status = res.statusCode;
    if (held.kept !== null && held.kept.body === body && held.kept.status === status) return send(body);
    const kept = status >= 500 ? keys.release(scope, key) : keys.answer(scope, key, status, body);
    // The answer goes out even when it could not be kept: the key then stays running, and a retry
    // is told the first was interrupted once this instance is gone, or in flight while it lives.
    void kept.catch(() => undefined).then(() => send(body));
    return res;
  };
}
