import { decodeCursor, encodeCursor, MAX_CURSOR_LENGTH } from '../../src/core/page-cursor';

test('when a key is encoded, then the cursor is URL-safe text that decodes back to the same key', () => {
  const cursor = encodeCursor(['zoë / desk?&', 42]);
  expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
  expect(decodeCursor(cursor, ['text', 'id'])).toEqual(['zoë / desk?&', 42]);
});

test.each([
  ['empty text', ''],
  ['characters outside base64url', 'a+b/c='],
  ['text that is not JSON', Buffer.from('{nope').toString('base64url')],
  ['an object, not a list', Buffer.from('{"a":1}').toString('base64url')],
  ['a list of another length', encodeCursor(['a'])],
  ['an id that is text', Buffer.from('["a","1"]').toString('base64url')],
  ['an id that is fractional', Buffer.from('["a",1.5]').toString('base64url')],
  ['an id past 2^53', Buffer.from('["a",9007199254740993]').toString('base64url')],
  ['a name past 1,000 characters', encodeCursor(['x'.repeat(1001), 1])],
  ['text past the length bound', 'A'.repeat(MAX_CURSOR_LENGTH + 1)],
])('when the cursor is %s, then it decodes to nothing', (_what, cursor) => {
  expect(decodeCursor(cursor, ['text', 'id'])).toBeNull();
});
