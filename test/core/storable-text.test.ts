// Text PostgreSQL can store (SEMANTICS §13): where a body holds a lone surrogate or a NUL, and what a
// model's or a tool's output becomes before it is written.
import { storableJson, unstorableAt } from '../../src/core/storable-text';

const nested = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : { inner: nested(depth - 1, leaf) });

describe('when a value holds a lone surrogate or a NUL', () => {
  test('then unstorableAt names the path to it, keys included', () => {
    expect(unstorableAt({ a: [1, { b: 'x\ud83c' }] })).toEqual(['a', 1, 'b']);
    expect(unstorableAt({ ['k\u0000']: 1 })).toEqual(['k\u0000']);
    expect(unstorableAt({ a: 'a paired \ud83c\udf66 is fine' })).toBeNull();
  });

  test('then a request body is walked to its bounded depth only: 64 objects below the body, no deeper', () => {
    // nested(n): the string sits in the object n - 1 levels below the body.
    expect(unstorableAt(nested(65, 'x\u0000'))).toHaveLength(65);
    expect(unstorableAt(nested(66, 'x\u0000'))).toBeNull();
  });

  test("then storableJson repairs a tool's output at any depth, keys and values, and leaves a clean one as it is", () => {
    const deep = storableJson(nested(200, { ['k\ud83c']: 'v\u0000' }));
    expect(JSON.stringify(deep)).toContain('{"k\ufffd":"v\ufffd"}');
    const clean = { a: ['b'] };
    expect(storableJson(clean)).toBe(clean);
  });
});
