// No request under the configured limits holds the event loop for more than 50 ms (SEMANTICS §12b):
// every POST and PATCH route of the API is fed hostile shapes of its fields (nested comments in
// every field, a thousand References, one long line of short sentences filling the 1 MB body, a
// 5,000-level body) while monitorEventLoopDelay watches the loop and /healthz is asked alongside.
// The table of examples covers every route that takes a body: a route added without one fails.
// So does its table of GET routes whose query takes text (an address, a cursor), fed the same way.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import request from 'supertest';
import { createTestApp, type TestApp } from '../support/app';
import { makeToolkit } from '../support/factories';
import { BODY_ROUTES, QUERY_ROUTES, queryExamples, routeExamples, routeKey } from '../support/route-examples';
import { createSundae, type Sundae } from '../support/scoop';

const LIMIT_MS = 50;
/** Two cores shared by parallel workers: a request is over only when every one of these tries is. */
const TRIES = 3;

let t: TestApp;
let sundae: Sundae;
let toolkit: number;
let approval: number;

beforeAll(async () => {
  // Senders are authenticated, so every Authentication-Results value is read.
  t = await createTestApp({ authservId: 'mx.thescoop.com' });
  sundae = await createSundae(t, 'approval');
  toolkit = await makeToolkit(t, 'Loop', ['lookup_order']);
  const filed = await t
    .client()
    .post(`/api/agents/${sundae.id}/tool-calls`)
    .send({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' })
    .expect(202);
  approval = filed.body.approval_request_id;
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
    return approval;
  },
});

const QUERY_EXAMPLES = queryExamples({
  get sundae() {
    return sundae;
  },
  get toolkit() {
    return toolkit;
  },
  get request() {
    return approval;
  },
});

const NESTED_COMMENTS = '('.repeat(499) + ')'.repeat(499);
/** One line of short sentences, as long as the 1 MB body leaves room for. */
const longLine = (chars: number) => 'Ab cd. '.repeat(Math.floor(chars / 7));
const THOUSAND_REFERENCES = Array.from({ length: 1000 }, (_, i) => `<m${i}@acme.com>`).join(' ');
const deepBody = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

type Shape = { name: string; body: string };

/** Every string leaf's path in a JSON value. */
function leaves(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, [...path, i]));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
  return [];
}

function withLeaf(value: unknown, path: (string | number)[], text: string): unknown {
  if (path.length === 0) return text;
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? withLeaf(v, rest, text) : v));
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, k === head ? withLeaf(v, rest, text) : v]),
  );
}

/** The hostile shapes of one route's body: each field nested, each field one long line filling the body, References, depth. */
function shapesOf(body: unknown): Shape[] {
  const shapes: Shape[] = [{ name: '5,000 levels deep', body: deepBody(5000) }];
  for (const leaf of leaves(body)) {
    const at = leaf.join('.');
    shapes.push({ name: `${at}: nested comments`, body: JSON.stringify(withLeaf(body, leaf, NESTED_COMMENTS)) });
    const room = 1_000_000 - JSON.stringify(body).length - 100;
    shapes.push({ name: `${at}: one long line of sentences`, body: JSON.stringify(withLeaf(body, leaf, longLine(room))) });
    if (leaf[leaf.length - 1] === 'references') {
      shapes.push({ name: `${at}: 1,000 References`, body: JSON.stringify(withLeaf(body, leaf, THOUSAND_REFERENCES)) });
    }
  }
  // Every address field of a message at once: 500 recipients in to and in cc, each nested.
  if (leaves(body).some((l) => l[l.length - 1] === 'from')) {
    const many = Array(500).fill(`x@y.com ${'('.repeat(3)})))`);
    const inMessage = (m: Record<string, unknown>) => ({ ...m, to: many, cc: many });
    const b = body as Record<string, unknown>;
    shapes.push({
      name: 'to and cc: 500 addresses each',
      body: JSON.stringify('message' in b ? { ...b, message: inMessage(b.message as Record<string, unknown>) } : inMessage(b)),
    });
  }
  // Every Authentication-Results value the schema allows (64 of 16,384 characters), each stamped
  // with our server's id so that it must be read, in the shapes that cost its reader most.
  const b = body as Record<string, unknown>;
  const message = typeof b.message === 'object' && b.message !== null ? (b.message as Record<string, unknown>) : null;
  const holder = 'authentication_results' in b ? b : message;
  if (holder !== null && 'authentication_results' in holder) {
    const stamped = (rest: string) => Array(64).fill(`mx.thescoop.com;${rest}`.slice(0, 16_384));
    const headers: Record<string, string[]> = {
      'many results': stamped(' dmarc=pass header.from=thescoop.com;'.repeat(440)),
      'many properties': stamped(` dmarc=pass ${Array.from({ length: 1500 }, (_, i) => `p.k${i}=v`).join(' ')}`),
      'many comments': stamped(` dmarc=pass ${'(c)'.repeat(5000)} header.from=thescoop.com`),
      'escaped quotes': stamped(` dmarc=pass reason="${'\\"'.repeat(8000)}"`),
    };
    for (const [name, values] of Object.entries(headers)) {
      const replaced = { ...holder, authentication_results: values };
      shapes.push({
        name: `authentication_results: 64 headers of ${name}`,
        body: JSON.stringify(holder === b ? replaced : { ...b, message: replaced }),
      });
    }
  }
  return shapes;
}

const tokenOf = (roles: readonly string[] | 'anyone') =>
  roles !== 'anyone' && roles.includes('client') ? 'client' : roles !== 'anyone' && roles.includes('scheduler') ? 'scheduler' : 'admin';

/** The longest the event loop was held while the request ran, in ms, and whether /healthz answered meanwhile. */
let keys = 0;

async function heldWhile(route: { method: string; roles: readonly string[] | 'anyone'; idempotent?: boolean }, path: string, body: string) {
  const probe = monitorEventLoopDelay({ resolution: 5 });
  const as = t[tokenOf(route.roles)]();
  probe.enable();
  const health = request(t.app).get('/healthz');
  const [res, healthz] = await Promise.all([
    // A route that takes an Idempotency-Key gets a new one: its digest reads the whole body too.
    as[route.method === 'patch' || route.method === 'put' ? route.method : 'post'](path)
      .set('Content-Type', 'application/json')
      .set(route.idempotent ? { 'Idempotency-Key': `loop-${++keys}` } : {})
      .send(body),
    health,
  ]);
  probe.disable();
  return { ms: probe.max / 1e6, status: res.status, healthz: healthz.status };
}

test('every POST, PUT and PATCH route has an example body, so none escapes the event-loop check', () => {
  expect(BODY_ROUTES.map(routeKey).filter((k) => !(k in EXAMPLES))).toEqual([]);
});

describe.each(BODY_ROUTES.map((r) => [routeKey(r), r] as const))('%s', (_name, route) => {
  test(`when fed hostile shapes of its fields, then no request holds the event loop over ${LIMIT_MS} ms and /healthz answers throughout`, async () => {
    const { path, body } = EXAMPLES[routeKey(route)]!();
    // Each message is a new one (no message_id to be refused as reused) on a thread of its own, so
    // every shape reaches the parsers it targets instead of an early 404 or 422.
    const runnable = JSON.parse(JSON.stringify(body, (k, v: unknown) => (k === 'thread_id' || k === 'message_id' ? undefined : v)));
    const over: { shape: string; ms: number[]; status: number }[] = [];
    for (const shape of shapesOf(runnable)) {
      const tries: number[] = [];
      let status = 0;
      for (let i = 0; i < TRIES; i++) {
        const held = await heldWhile(route, path, shape.body);
        expect({ shape: shape.name, healthz: held.healthz, fault: held.status >= 500 }).toEqual({
          shape: shape.name,
          healthz: 200,
          fault: false,
        });
        tries.push(Math.round(held.ms));
        status = held.status;
        if (held.ms <= LIMIT_MS) break;
      }
      if (tries.every((ms) => ms > LIMIT_MS)) over.push({ shape: shape.name, ms: tries, status });
    }
    expect(over).toEqual([]);
  }, 180_000);
});

/** Hostile values for one query parameter: as long as a query allows, a cursor of deep JSON, a LIKE pattern of wildcards. */
const HOSTILE_QUERY_VALUES: Record<string, string> = {
  'a 4,000-character value': 'A'.repeat(4000),
  'a cursor of 1,500-level JSON': Buffer.from('['.repeat(1500) + ']'.repeat(1500)).toString('base64url'),
  'a cursor of the longest length it takes': Buffer.from(JSON.stringify(['%'.repeat(1000), 1]))
    .toString('base64url')
    .slice(0, 2048),
  'wildcards and escapes': '%_\\'.repeat(50),
  'nested comments': NESTED_COMMENTS,
};

test('every route that reads a query string has an example query, so none escapes the event-loop check', () => {
  expect(QUERY_ROUTES.map(routeKey).filter((k) => !(k in QUERY_EXAMPLES))).toEqual([]);
});

describe.each(QUERY_ROUTES.map((r) => [routeKey(r), r] as const))('%s', (_name, route) => {
  test(`when each query parameter is hostile, then no request holds the event loop over ${LIMIT_MS} ms, none is a 5xx, and /healthz answers throughout`, async () => {
    const { path, query } = QUERY_EXAMPLES[routeKey(route)]!();
    const over: { shape: string; ms: number[] }[] = [];
    for (const parameter of Object.keys(query)) {
      for (const [name, value] of Object.entries(HOSTILE_QUERY_VALUES)) {
        const tries: number[] = [];
        for (let i = 0; i < TRIES; i++) {
          const probe = monitorEventLoopDelay({ resolution: 5 });
          probe.enable();
          const [res, healthz] = await Promise.all([
            t[tokenOf(route.roles)]()
              .get(path)
              .query({ ...query, [parameter]: value }),
            request(t.app).get('/healthz'),
          ]);
          probe.disable();
          expect({ parameter, name, healthz: healthz.status, fault: res.status >= 500 }).toEqual({
            parameter,
            name,
            healthz: 200,
            fault: false,
          });
          tries.push(Math.round(probe.max / 1e6));
          if (probe.max / 1e6 <= LIMIT_MS) break;
        }
        if (tries.every((ms) => ms > LIMIT_MS)) over.push({ shape: `${parameter}: ${name}`, ms: tries });
      }
    }
    expect(over).toEqual([]);
  }, 180_000);
});
