// A request id on every request: taken from a sane X-Request-Id header or made, echoed back, and
// carried into logs and error bodies.
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { requestState } from './request-state';

const SANE_ID = /^[A-Za-z0-9._:-]{1,100}$/;

export function requestId(): RequestHandler {
  return function assignRequestId(req, res, next) {
    const given = req.get('x-request-id');
    const id = given && SANE_ID.test(given) ? given : randomUUID();
    requestState(res).requestId = id;
    res.set('X-Request-Id', id);
    next();
  };
}
