// Every string field of every POST and PATCH the API serves, fuzzed with text PostgreSQL cannot
// store (lone UTF-16 surrogates, NUL) and with random Unicode: no answer is a 5xx (SEMANTICS §13).
// The table of example bodies must cover every route that takes one: a route added without an
// example fails the first test.
import fc from 'fast-check';
import { createTestApp, type TestApp } from '../support/app';
import { createSundae, type Sundae } from '../support/scoop';
import { makeToolkit } from '../support/factories';
import { BODY_ROUTES, routeExamples, routeKey as key } from '../support/route-examples';

let t: TestApp;
let sundae: Sundae;
let toolkit: number;
let request: number;

beforeAll(async () => {
  t = await createTestApp();
  sundae = await createSundae(t, 'approval');
  toolkit = await makeToolkit(t, 'Fuzz', ['lookup_order']);
  const filed = await t
    .client()
    .post(`/api/agents/${sundae.id}/tool-calls`)
    .send({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' })
    .expect(202);
  request = filed.body.approval_request_id;
});
afterAll(() => t.close());

const EXAMPLES = routeExamples({
  get sundae() {
    return sundae;
  },
  get toolkit() {
    return toolkit;
  },
  get request() {
    return request;
  },
});

const ROUTES = BODY_ROUTES;

/** Every string value in a JSON value, as a path (keys are checked by test/core/storable-text.test.ts and the message key case). */
function stringLeaves(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringLeaves(v, [...path, i]));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, [...path, k]));
  return [];
}

function withLeaf(value: unknown, path: (string | number)[], replace: (s: string) => string): unknown {
  if (path.length === 0) return replace(value as string);
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? withLeaf(v, rest, replace) : v));
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, k === head ? withLeaf(v, rest, replace) : v]),
  );
}

const send = (route: { method: string; roles: readonly string[] | 'anyone' }, path: string, body: unknown) => {
  const as =
    route.roles !== 'anyone' && route.roles.includes('client')
      ? t.client()
      : route.roles !== 'anyone' && route.roles.includes('scheduler') && !route.roles.includes('client')
        ? t.scheduler()
        : t.admin();
  return as[route.method === 'patch' || route.method === 'put' ? route.method : 'post'](path).send(body as object);
};

// Code units from everywhere, and the ones that break a write, often enough to be drawn.
const MIXED = fc.constantFrom('a', ' ', '@', 'é', '😀', '\ud83c', '\udf66', '\u0000', '\u202e', '\uffff');

const BAD = [
  ['a lone high surrogate', '\ud83c'],
  ['a lone low surrogate', '\udf66'],
  ['a reversed pair', '\udf66\ud83c'],
  ['NUL', '\u0000'],
] as const;

test('every POST, PUT and PATCH route has an example body here, so none escapes the fuzz', () => {
  expect(ROUTES.map(key).filter((k) => !(k in EXAMPLES))).toEqual([]);
});

describe.each(ROUTES.map((r) => [key(r), r] as const))('%s', (_name, route) => {
  test('when any string field holds a lone surrogate or a NUL, then the answer is a 422 naming it, never a 5xx', async () => {
    const { path, body } = EXAMPLES[key(route)]!();
    const leaves = stringLeaves(body);
    expect(leaves.length).toBeGreaterThan(0);
    for (const leaf of leaves) {
      for (const [, bad] of BAD) {
        const res = await send(
          route,
          path,
          withLeaf(body, leaf, (s) => `${s.slice(0, 1)}${bad}${s.slice(1)}`),
        );
        expect({ leaf, bad: JSON.stringify(bad), status: res.status }).toEqual({ leaf, bad: JSON.stringify(bad), status: 422 });
        expect(res.body.detail[0].loc).toEqual(['body', ...leaf]);
      }
    }
  });

  test('when any string field holds random Unicode, then no answer is a 5xx', async () => {
    const { path, body } = EXAMPLES[key(route)]!();
    const leaves = stringLeaves(body);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...leaves),
        fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: MIXED, maxLength: 12 })),
        async (leaf, text) => {
          const res = await send(
            route,
            path,
            withLeaf(body, leaf, () => text),
          );
          expect({ leaf, text, status: res.status < 500 }).toEqual({ leaf, text, status: true });
        },
      ),
      { numRuns: 15 },
    );
  });
});
