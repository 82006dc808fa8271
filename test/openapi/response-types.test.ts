// The OpenAPI document's response schemas describe what the services really send: each schema's
// type must equal the view type it describes, or what the function its route calls resolves to, so
// a field added to one and not the other stops `tsc` (and so `npm test`) before any test runs.
import type { z } from 'zod';
import type { Resolution } from '../../src/core/types';
import * as r from '../../routes/responses';

// Each assignable to the other: a field missing, added, renamed, made optional or retyped on one
// side only breaks one direction.
type Same<S extends z.ZodType, T> = [z.output<S>] extends [T] ? ([T] extends [z.output<S>] ? true : false) : false;
const checks = {
  resolution: true as Same<typeof r.resolutionResponse, Resolution>,
} satisfies Record<string, true>;

test('every response schema has exactly the type of the view it describes (checked by tsc)', () => {
  expect(Object.values(checks).every(Boolean)).toBe(true);
});
