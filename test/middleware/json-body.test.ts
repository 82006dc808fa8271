// jsonBody(): JSON bodies with a size cap, and the parser's failures as toolgate's errors (400,
// 413, 415) instead of its HTML pages; text PostgreSQL cannot store is refused before any route.
import { jsonBody } from '../../middleware/json-body';
import { throughMiddleware } from '../support/middleware-harness';

const json = (text: string | Buffer, contentType = 'application/json') => ({ raw: { contentType, text } });

test('when the body is JSON within the limit, then it is parsed and passed on', async () => {
  expect((await throughMiddleware(jsonBody({ limit: '1kb' }), json('{"word":"hi"}'))).passed).toBe(true);
});

test('when the body is not JSON, then it is a 400 invalid_json', async () => {
  expect(await throughMiddleware(jsonBody({ limit: '1kb' }), json('{"word":'))).toMatchObject({
    status: 400,
    body: { code: 'invalid_json' },
  });
});

test('when the body is over the limit, then it is a 413 payload_too_large', async () => {
  const out = await throughMiddleware(jsonBody({ limit: '100b' }), json(JSON.stringify({ word: 'x'.repeat(200) })));
  expect(out).toMatchObject({ status: 413, body: { code: 'payload_too_large' } });
});

test('when the body says a charset other than UTF-8, then it is a 415 unsupported_media_type', async () => {
  const out = await throughMiddleware(jsonBody({ limit: '1kb' }), json('{"word":"hi"}', 'application/json; charset=ebcdic'));
  expect(out).toMatchObject({ status: 415, body: { code: 'unsupported_media_type' } });
});

test('when a value or a key holds a NUL or a lone surrogate, then it is a 422 naming where, before any route', async () => {
  const nul = await throughMiddleware(jsonBody({ limit: '1kb' }), json('{"message":{"subject":"a\\u0000b"}}'));
  expect(nul).toMatchObject({ status: 422, passed: false, body: { code: 'validation_error' } });
  expect(JSON.stringify(nul.body.detail)).toContain('subject');
  const surrogate = await throughMiddleware(jsonBody({ limit: '1kb' }), json('{"\\ud800":"x"}'));
  expect(surrogate).toMatchObject({ status: 422, passed: false });
});

/** `[[[…]]]` `levels` deep, as text: JSON.parse reads it without recursion. */
const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

test('when the body nests deeper than 64 levels, then it is a 422 input_too_complex naming json_depth, before any route', async () => {
  const out = await throughMiddleware(jsonBody({ limit: '1mb' }), json(nested(5000)));
  expect(out).toMatchObject({ status: 422, passed: false, body: { code: 'input_too_complex', bound: 'json_depth' } });
  expect(out.body.loc).toEqual(['body', ...Array(64).fill(0)]);
});

test('when the body nests exactly 64 levels, then it passes on', async () => {
  expect((await throughMiddleware(jsonBody({ limit: '1mb' }), json(nested(64)))).passed).toBe(true);
});
