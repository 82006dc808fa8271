import { jsonText } from '../../src/core/json-text';

test('when a value is written, then it reads as JSON.stringify writes it', () => {
  for (const value of [{ a: [1, 'two', null, { b: true }], c: {}, d: [] }, 'x"y', 3.5, null, [], { e: undefined, f: 1 }])
    expect(jsonText(value)).toBe(JSON.stringify(value));
});

test('when a value nests 100,000 deep, then it is written without exhausting the stack', () => {
  let v: unknown = 'leaf';
  for (let i = 0; i < 100_000; i++) v = { inner: v };
  const text = jsonText(v);
  expect(text.startsWith('{"inner":{"inner":')).toBe(true);
  expect(text.length).toBe(100_000 * '{"inner":}'.length + '"leaf"'.length);
});
