import { sameJson } from '../../src/core/same-json';

test('when two objects hold the same keys and values in another order, then they are the same', () => {
  expect(
    sameJson({ type: 'object', properties: { a: { type: 'string' } } }, { properties: { a: { type: 'string' } }, type: 'object' }),
  ).toBe(true);
});

test('when a value differs anywhere, a key is missing, or an array is in another order, then they are not the same', () => {
  expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
  expect(sameJson({ a: 1, b: 2 }, { a: 1 })).toBe(false);
  expect(sameJson({ a: { b: 'x' } }, { a: { b: 'y' } })).toBe(false);
  expect(sameJson({ a: null }, { a: {} })).toBe(false);
  expect(sameJson([], {})).toBe(false);
  expect(sameJson('1', 1)).toBe(false);
});

test('when a key holds undefined, then it counts as absent, as in JSON', () => {
  expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
});

test('when values nest 100,000 deep, then they are compared without exhausting the stack', () => {
  const nest = (leaf: string) => {
    let v: unknown = leaf;
    for (let i = 0; i < 100_000; i++) v = { inner: v };
    return v;
  };
  expect(sameJson(nest('x'), nest('x'))).toBe(true);
  expect(sameJson(nest('x'), nest('y'))).toBe(false);
});
