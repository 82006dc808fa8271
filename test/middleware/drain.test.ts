// Drain: counts the requests in flight while open; once draining, refuses new ones with a 503 that
// tells a load balancer to go elsewhere, and waits for those in flight within its bound.
import type { RequestHandler } from 'express';
import { Drain } from '../../middleware/drain';
import { throughMiddleware } from '../support/middleware-harness';

test('when it is open, then requests pass, and each is counted only while it is served', async () => {
  const drain = new Drain();
  let during = -1;
  const look: RequestHandler = (_req, _res, next) => {
    during = drain.inFlight;
    next();
  };
  expect((await throughMiddleware([drain.middleware, look])).passed).toBe(true);
  expect(during).toBe(1);
  expect(drain.inFlight).toBe(0);
});

test('when it drains, then a new request is a 503 shutting_down with Retry-After and Connection: close', async () => {
  const drain = new Drain();
  expect(await drain.drain(10)).toEqual({ drained: true, left: 0 });
  const out = await throughMiddleware(drain.middleware);
  expect(out).toMatchObject({ status: 503, passed: false, body: { code: 'shutting_down' } });
  expect(out.headers['retry-after']).toBe('1');
  expect(out.headers.connection).toBe('close');
});

test('when a request is in flight, then drain waits for it, and reports one left when its bound passes first', async () => {
  const drain = new Drain();
  let release!: () => void;
  const held: RequestHandler = (_req, _res, next) => {
    release = next;
  };
  const answer = throughMiddleware([drain.middleware, held]);
  while (drain.inFlight === 0) await new Promise((r) => setImmediate(r));
  expect(await drain.drain(20)).toEqual({ drained: false, left: 1 });
  const waiting = drain.drain(5_000);
  release();
  expect((await answer).passed).toBe(true);
  expect(await waiting).toEqual({ drained: true, left: 0 });
});
