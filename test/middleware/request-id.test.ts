// requestId(): every request gets an id, its own when it sent a sane one, echoed back.
import { requestId } from '../../middleware/request-id';
import { throughMiddleware } from '../support/middleware-harness';

test('when the request sends a sane X-Request-Id, then that id is kept, echoed and put in the state', async () => {
  const out = await throughMiddleware(requestId(), { headers: { 'X-Request-Id': 'abc-123.x:y' } });
  expect(out.passed).toBe(true);
  expect(out.headers['x-request-id']).toBe('abc-123.x:y');
  expect(out.state?.requestId).toBe('abc-123.x:y');
});

test('when the request sends none, or one with spaces or of 101 characters, then a UUID is made instead', async () => {
  for (const headers of [{}, { 'X-Request-Id': 'has spaces' }, { 'X-Request-Id': 'a'.repeat(101) }] as Record<string, string>[]) {
    const out = await throughMiddleware(requestId(), { headers });
    expect(out.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.state?.requestId).toBe(out.headers['x-request-id']);
  }
});
