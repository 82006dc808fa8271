// A decision-log cursor: an opaque token for (transaction id, position), read back in the one
// spelling it was given in, and refused otherwise.
import fc from 'fast-check';
import { decodeCursor, encodeCursor, LOG_START } from '../../src/core/decision-cursor';

const token = (payload: string) => Buffer.from(payload, 'utf8').toString('base64url');

test('when any position in range is encoded, then decoding its token gives it back', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }), (xact, position) => {
      const cursor = { xact: xact.toString(), position: position.toString() };
      expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    }),
  );
});

test('when the start is encoded, then its token is short, opaque and decodes to the start', () => {
  const start = encodeCursor(LOG_START);
  expect(start).toMatch(/^[A-Za-z0-9_-]+$/);
  expect(decodeCursor(start)).toEqual({ xact: '0', position: '0' });
});

test.each([
  ['empty', ''],
  ['not base64url', 'a+b/c='],
  ['base64url of something else', token('hello')],
  ['another version', token('v2:1:1')],
  ['a leading zero', token('v1:01:1')],
  ['a sign', token('v1:+1:1')],
  ['a transaction id past 2^64 - 1', token(`v1:${2n ** 64n}:1`)],
  ['a position past 2^63 - 1', token(`v1:1:${2n ** 63n}`)],
  ['a third number', token('v1:1:2:3')],
  ['a space', token('v1: 1:2')],
  ['longer than any token', 'A'.repeat(97)],
])('when a token is %s, then it is refused', (_name, value) => {
  expect(decodeCursor(value)).toBeNull();
});

test('when a token differs only in the unused bits of its last character, then only the one that was given is read', () => {
  const given = encodeCursor({ xact: '7', position: '42' });
  const last = given.at(-1)!;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const twins = [...alphabet]
    .filter((c) => c !== last)
    .map((c) => given.slice(0, -1) + c)
    .filter((t) => Buffer.from(t, 'base64url').equals(Buffer.from(given, 'base64url')));
  expect(twins.length).toBeGreaterThan(0);
  for (const twin of twins) expect(decodeCursor(twin)).toBeNull();
});
