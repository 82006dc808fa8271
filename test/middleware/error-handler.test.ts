// errorHandler(): the one place an error becomes an answer. The service renders every error (a
// fault of its own is a 500 with no stack); a host's app gets toolgate's errors rendered and every
// other error passed on to its own handlers.
import express, { type ErrorRequestHandler } from 'express';
import request from 'supertest';
import { errorHandler } from '../../middleware/error-handler';
import { ConflictError, ToolgateConfigError } from '../../src/errors';
import type { ToolgateLogger } from '../../src/toolgate-logger';

/** An app whose one route fails with `err`, rendered by errorHandler(options), then by a host's own handler. */
function failingWith(err: unknown, options: Parameters<typeof errorHandler>[0]) {
  const app = express();
  app.get('/', (_req, res, next) => {
    res.locals.toolgate = { requestId: 'req-1' };
    next(err);
  });
  app.use(errorHandler(options));
  const hosts: ErrorRequestHandler = (_err, _req, res, _next) => void res.status(418).json({ host: true });
  app.use(hosts);
  return request(app).get('/');
}

test("when a route fails with toolgate's error, then its status, code, sentence, extra fields and request id are the answer", async () => {
  const res = await failingWith(new ConflictError('A toolkit named Support already exists: pick another name.'), {});
  expect(res.status).toBe(409);
  expect(res.body).toEqual({ detail: 'A toolkit named Support already exists: pick another name.', code: 'conflict', request_id: 'req-1' });
});

test('when a route fails with a misconfiguration, then it is a 500 misconfigured whose sentence says what to change', async () => {
  const res = await failingWith(new ToolgateConfigError('ERR_TOOLGATE_NO_RUN', 'toolRun() is not mounted before it.'), {});
  expect(res.status).toBe(500);
  expect(res.body).toMatchObject({ code: 'misconfigured', detail: expect.stringContaining('toolRun() is not mounted before it.') });
});

test('when the service meets a fault of its own, then it is a 500 internal_error with no stack, and the log keeps what happened', async () => {
  const lines: Record<string, unknown>[] = [];
  const logger: ToolgateLogger = { error: (details) => void lines.push(details) };
  const res = await failingWith(new Error('undefined is not a function at secret.ts:12'), { renderAll: true, logger });
  expect(res.status).toBe(500);
  expect(res.body.code).toBe('internal_error');
  expect(JSON.stringify(res.body)).not.toContain('secret.ts');
  expect(lines).toEqual([
    expect.objectContaining({
      request_id: 'req-1',
      status: 500,
      err: expect.objectContaining({ message: 'undefined is not a function at secret.ts:12' }),
    }),
  ]);
});

test("when a host's app meets an error that is not toolgate's, then it is passed on to the host's own handler", async () => {
  const res = await failingWith(new Error('the host’s own'), { renderAll: false });
  expect(res.status).toBe(418);
  expect(res.body).toEqual({ host: true });
});

test('when the database cannot be reached, then the service answers 503 unavailable: nothing was granted', async () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5433'), { code: 'ECONNREFUSED' });
  const res = await failingWith(refused, { renderAll: true });
  expect(res.status).toBe(503);
  expect(res.body.code).toBe('unavailable');
});
