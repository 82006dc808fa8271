// The dashboard's forms hold the event loop no longer than the API's routes do (SEMANTICS §12b):
// every form POST of the dashboard, signed in and with its CSRF token, is sent every field its
// pages name at once, each in a hostile shape (nested comments, one line as long as the form limit
// allows, the most fields the parser takes), while monitorEventLoopDelay watches the loop and
// /healthz is asked alongside. The routes are read from the dashboard's source, so a new form
// route is fed too.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import request from 'supertest';
import { signedIn, type Visitor } from '../dashboard/session';
import { createTestApp, type TestApp } from '../support/app';
import { makeToolkit } from '../support/factories';
import { createSundae, type Sundae } from '../support/scoop';

const LIMIT_MS = 50;
/** Two cores shared by parallel workers: a form is over only when every one of these tries is. */
const TRIES = 3;
const DASHBOARD = path.join(__dirname, '..', '..', 'src', 'app', 'dashboard');

/** Every file of the dashboard's source under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(path.join(dir, entry.name)) : /\.tsx?$/.test(entry.name) ? [path.join(dir, entry.name)] : [],
  );
}
const SOURCE = sources(DASHBOARD).map((file) => readFileSync(file, 'utf8'));
/** The form routes, as the routers declare them (`${decision}` for each decision). */
const POST_ROUTES = [
  ...new Set(
    SOURCE.flatMap((text) => [...text.matchAll(/router\.post\(\s*['`]([^'`]+)['`]/g)].map((m) => m[1]!)).flatMap((route) =>
      route.includes('${decision}') ? ['approve', 'deny'].map((d) => route.replace('${decision}', d)) : [route],
    ),
  ),
];
/** Every field name a dashboard page's forms hold. */
const FIELDS = [...new Set(SOURCE.flatMap((text) => [...text.matchAll(/name="([a-z_]+)"/g)].map((m) => m[1]!)))].filter(
  (name) => name !== '_csrf' && name !== 'viewport',
);

const NESTED_COMMENTS = `x@y.com ${'('.repeat(400)}${')'.repeat(400)}`;
/** One line of short sentences, as long as the form's 100 kb limit leaves room for in one field. */
const LONG_LINE = 'Ab cd. '.repeat(13_000);

let t: TestApp;
let v: Visitor;
let sundae: Sundae;
let toolkit: number;

beforeAll(async () => {
  t = await createTestApp({ dashboard: true });
  sundae = await createSundae(t, 'approval');
  toolkit = await makeToolkit(t, 'Loop forms', ['lookup_order']);
});
afterAll(() => t.close());

/** A route's path with ids that name real rows, so the form reaches its handler. */
function concrete(route: string): string {
  const ids: Record<string, number> = {
    id: sundae.id,
    attachmentId: sundae.finance,
    toolkitId: toolkit,
    ruleId: 1,
    requestId: 1,
    index: 0,
  };
  return `/admin${route.replace(/:([A-Za-z]+)/g, (_m, name: string) => String(ids[name] ?? 1))}`;
}

async function heldWhile(url: string, form: URLSearchParams): Promise<{ ms: number; status: number; healthz: number }> {
  const probe = monitorEventLoopDelay({ resolution: 5 });
  probe.enable();
  const [res, healthz] = await Promise.all([
    request(t.app)
      .post(url)
      .set(v.cookie ? { cookie: v.cookie } : {})
      .type('form')
      .send(form.toString()),
    request(t.app).get('/healthz'),
  ]);
  probe.disable();
  return { ms: probe.max / 1e6, status: res.status, healthz: healthz.status };
}

test('the dashboard has form routes and fields to feed', () => {
  expect(POST_ROUTES.length).toBeGreaterThan(10);
  expect(FIELDS).toEqual(expect.arrayContaining(['pattern', 'name', 'member', 'approval', 'token']));
});

describe.each(POST_ROUTES.map((route) => [route]))('POST /admin%s', (route) => {
  test(`when every field is sent in a hostile shape, then no form holds the event loop over ${LIMIT_MS} ms and /healthz answers`, async () => {
    // A visitor of its own: a form may end the session (sign-out) or change what the next one reads.
    v = await signedIn(t.app);
    const csrf = await v.token('/admin/agents');
    const shapes: Record<string, URLSearchParams> = {
      'nested comments in every field': new URLSearchParams([
        ['_csrf', csrf],
        ...FIELDS.map((f): [string, string] => [f, NESTED_COMMENTS]),
      ]),
      'one long line in each field': new URLSearchParams([
        ['_csrf', csrf],
        ['pattern', LONG_LINE],
        ['name', LONG_LINE.slice(0, 1000)],
      ]),
      'the most fields the parser takes': new URLSearchParams([
        ['_csrf', csrf],
        ...Array.from({ length: 1990 }, (_, i): [string, string] => [FIELDS[i % FIELDS.length]!, `*@d${i}.example`]),
      ]),
    };
    const over: { shape: string; ms: number[] }[] = [];
    for (const [shape, form] of Object.entries(shapes)) {
      const tries: number[] = [];
      for (let i = 0; i < TRIES; i++) {
        const held = await heldWhile(concrete(route), form);
        expect({ shape, healthz: held.healthz, fault: held.status >= 500 }).toEqual({ shape, healthz: 200, fault: false });
        tries.push(Math.round(held.ms));
        if (held.ms <= LIMIT_MS) break;
      }
      if (tries.every((ms) => ms > LIMIT_MS)) over.push({ shape, ms: tries });
    }
    expect(over).toEqual([]);
  }, 120_000);
});
