// Every string field of every POST and PATCH the API serves, fuzzed with text PostgreSQL cannot
// store (lone UTF-16 surrogates, NUL) and with random Unicode: no answer is a 5xx (SEMANTICS §13).
// The table of example bodies must cover every route that takes one: a route added without an
// example fails the first test.
import fc from 'fast-check';
import { API_ROUTES } from '../../routes/api-routes';
import { createTestApp, type TestApp } from '../support/app';
import { createSundae, type Sundae } from '../support/scoop';
import { makeToolkit } from '../support/factories';

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

const message = {
  from: 'Jane <jane@acme.com>',
  to: ['support@thescoop.com'],
  cc: 'omar@example.org',
  reply_to: 'jane@acme.com',
  subject: 'Melted',
  body: 'Order SCP-1042 arrived melted.',
  message_id: '<m@acme.com>',
  in_reply_to: '<x@acme.com>',
  references: '<a@b> <c@d>',
  authentication_results: ['mx.thescoop.com; dmarc=pass header.from=acme.com'],
};

/** For each route that takes a body: a path to call and a body it accepts. */
const EXAMPLES: Record<string, () => { path: string; body: unknown }> = {
  'post /toolkits': () => ({
    path: '/api/toolkits',
    body: { name: 'Fuzzed kit', description: 'A kit.', member_tool_ids: ['lookup_order', 'check_flavor_stock'] },
  }),
  'patch /toolkits/:toolkitId': () => ({
    path: `/api/toolkits/${toolkit}`,
    body: { name: 'Fuzz', description: 'Changed.', member_tool_ids: ['lookup_order'] },
  }),
  'post /agents': () => ({
    path: '/api/agents',
    body: {
      name: 'Fuzzed',
      description: 'An agent.',
      system_prompt: 'Be brief.',
      enabled_tools: 'email_analyzer, task_creator',
      escalation_address: 'mara@thescoop.com',
    },
  }),
  'patch /agents/:id': () => ({
    path: `/api/agents/${sundae.id}`,
    body: { name: 'Sundae', description: 'Support.', system_prompt: 'Be kind.', escalation_address: 'mara@thescoop.com' },
  }),
  'post /agents/:id/toolkits': () => ({
    path: `/api/agents/${sundae.id}/toolkits`,
    body: { toolkit_id: toolkit, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }], approval: { approvers: ['mara@thescoop.com'] } },
  }),
  'patch /agents/:id/toolkits/:attachmentId': () => ({
    path: `/api/agents/${sundae.id}/toolkits/${sundae.finance}`,
    body: { rules: [{ kind: 'deny', pattern: 'x@acme.com' }], approval: { approvers: ['*@thescoop.com'] } },
  }),
  'post /agents/:id/toolkits/:attachmentId/rules': () => ({
    path: `/api/agents/${sundae.id}/toolkits/${sundae.finance}/rules`,
    body: { kind: 'deny', pattern: 'spam@acme.com' },
  }),
  'post /agents/:id/access-rules': () => ({
    path: `/api/agents/${sundae.id}/access-rules`,
    body: { kind: 'deny', pattern: 'spam@acme.com' },
  }),
  'post /agents/:id/tool-calls': () => ({
    path: `/api/agents/${sundae.id}/tool-calls`,
    body: { tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com', authentication_results: ['mx; spf=pass'] },
  }),
  'post /agents/:id/messages': () => ({
    path: `/api/agents/${sundae.id}/messages`,
    body: { thread_id: 'thr_00000000000000000000000000000000', message },
  }),
  'post /agents/:id/runs': () => ({ path: `/api/agents/${sundae.id}/runs`, body: { instruction: 'Check the stock.' } }),
  'post /agents/:id/approval-requests/:requestId/approve': () => ({
    path: `/api/agents/${sundae.id}/approval-requests/${request}/approve`,
    body: { note: 'ok' },
  }),
  'post /agents/:id/approval-requests/:requestId/deny': () => ({
    path: `/api/agents/${sundae.id}/approval-requests/${request}/deny`,
    body: { note: 'no' },
  }),
  'post /agents/:id/email/analyze': () => ({ path: `/api/agents/${sundae.id}/email/analyze`, body: message }),
  'post /agents/:id/workflows/email': () => ({ path: `/api/agents/${sundae.id}/workflows/email`, body: message }),
  'post /agents/:id/documents': () => ({
    path: `/api/agents/${sundae.id}/documents`,
    body: { title: 'Refunds', content: 'Refunds are issued within 14 days.' },
  }),
  'post /agents/:id/documents/search': () => ({
    path: `/api/agents/${sundae.id}/documents/search`,
    body: { query: 'refund', top_k: 3, sender: 'jane@acme.com' },
  }),
  'post /agents/:id/documents/ask': () => ({
    path: `/api/agents/${sundae.id}/documents/ask`,
    body: { question: 'When are refunds issued?', sender: 'jane@acme.com' },
  }),
  'post /agents/:id/chat': () => ({ path: `/api/agents/${sundae.id}/chat`, body: { message: 'Hello', sender: 'jane@acme.com' } }),
  // Its schema holds no string: the one here is refused as unknown, and must still be no 5xx.
  'post /migrations/enabled-tools': () => ({ path: '/api/migrations/enabled-tools', body: { dry_run: true, map_typos: false, note: 'x' } }),
  'post /toolkits/sync': () => ({ path: '/api/toolkits/sync', body: { note: 'sync' } }),
  'post /embeddings/reindex': () => ({ path: '/api/embeddings/reindex', body: { note: 'reindex' } }),
};

const ROUTES = API_ROUTES.flatMap((g) => g.section.routes).filter((r) => r.method === 'post' || r.method === 'patch');
const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

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
  return (route.method === 'patch' ? as.patch(path) : as.post(path)).send(body as object);
};

// Code units from everywhere, and the ones that break a write, often enough to be drawn.
const MIXED = fc.constantFrom('a', ' ', '@', 'é', '😀', '\ud83c', '\udf66', '\u0000', '\u202e', '\uffff');

const BAD = [
  ['a lone high surrogate', '\ud83c'],
  ['a lone low surrogate', '\udf66'],
  ['a reversed pair', '\udf66\ud83c'],
  ['NUL', '\u0000'],
] as const;

test('every POST and PATCH route has an example body here, so none escapes the fuzz', () => {
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
