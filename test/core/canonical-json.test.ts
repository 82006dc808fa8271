// canonicalJson: JSON.stringify's text with object keys sorted, as the recursive form wrote it (so
// stored Idempotency-Key digests still match), at any depth without exhausting the stack.
import fc from 'fast-check';
import { canonicalJson } from '../../src/core/canonical-json';

/** The form canonicalJson had before it was written without recursion. */
const recursiveForm = (value: unknown) =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );

test('when given any JSON value, then it writes what the recursive form wrote', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => canonicalJson(value) === recursiveForm(value)),
    { numRuns: 2000 },
  );
});

test('when an object has index-like keys, undefined values, functions and a Date, then it writes them as JSON.stringify does, keys sorted', () => {
  const value = { b: 1, '10': 2, '2': 3, a: undefined, f: () => 1, when: new Date(0), list: [undefined, () => 1] };
  expect(canonicalJson(value)).toBe(recursiveForm(value));
});

test('when a value nests 100,000 levels deep, then it is written without a stack overflow', () => {
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = { a: [deep] };
  expect(canonicalJson(deep)).toHaveLength(100_000 * 8 + 1);
});
