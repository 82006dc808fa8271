// Generated hostile requests against every route: whatever the method, path, token, content type
// or body, the answer is never a 500, always the HTTP.md error shape, and never a grant to a run
// that should have none. The request count docs/SECURITY.md quotes is asserted at the end of this file.
import { domainToASCII } from 'node:url';
import fc from 'fast-check';
import request from 'supertest';
import { QueryTypes } from 'sequelize';
import { toolIdSchema } from '../../src/core/types';
import { ADMIN_TOKEN, CLIENT_TOKEN, SCHEDULER_TOKEN, createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;
let agent: number;
let attachment: number | undefined;
let toolkit: number;
let sent = 0;

/** Requests per property; the total is asserted at the end so the docs' figure stays true. */
const RUNS = Number(process.env.TOOLGATE_FUZZ_RUNS ?? 150);

/** The agent, toolkit and gated attachment the requests aim at; remade when a request deleted them. */
async function ensureFixtures(): Promise<void> {
  const [row] = await t.sequelize.query<{ n: string }>(
    "SELECT count(*) AS n FROM agent_toolkits at JOIN agent_toolkit_rules r ON r.agent_toolkit_id = at.id WHERE at.id = :attachment AND r.pattern = '*@thescoop.com' AND r.kind = 'allow'",
    { replacements: { attachment: attachment ?? 0 }, type: QueryTypes.SELECT },
  );
  if (row.n === '1') return;
  const name = `Finance ${sent}`;
  toolkit = (
    await t
      .admin()
      .post('/api/toolkits')
      .send({ name, member_tool_ids: ['process_refund', 'lookup_order'] })
      .expect(201)
  ).body.id;
  agent = await makeAgent(t, { name: 'Sundae', toolkit_ids: [] });
  attachment = (
    await t
      .admin()
      .post(`/api/agents/${agent}/toolkits`)
      .send({ toolkit_id: toolkit, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] })
      .expect(201)
  ).body.id;
}

beforeAll(async () => {
  t = await createTestApp({ bodyLimit: '64kb' });
  await ensureFixtures();
});

afterAll(() => t.close());

// Route templates: :a an agent id, :k a toolkit id, :t an attachment id, :r a rule id, :d a document id.
const ROUTES: [string, string][] = [
  ['GET', '/api/tools'],
  ['GET', '/api/toolkits'],
  ['POST', '/api/toolkits'],
  ['POST', '/api/toolkits/sync'],
  ['GET', '/api/toolkits/:k'],
  ['PATCH', '/api/toolkits/:k'],
  ['DELETE', '/api/toolkits/:k'],
  ['GET', '/api/agents'],
  ['POST', '/api/agents'],
  ['GET', '/api/agents/:a'],
  ['PATCH', '/api/agents/:a'],
  ['DELETE', '/api/agents/:a'],
  ['GET', '/api/agents/:a/toolkits'],
  ['POST', '/api/agents/:a/toolkits'],
  ['GET', '/api/agents/:a/toolkits/:t'],
  ['PATCH', '/api/agents/:a/toolkits/:t'],
  ['DELETE', '/api/agents/:a/toolkits/:t'],
  ['POST', '/api/agents/:a/toolkits/:t/rules'],
  ['DELETE', '/api/agents/:a/toolkits/:t/rules/:r'],
  ['GET', '/api/agents/:a/tools'],
  ['GET', '/api/agents/:a/tool-calls'],
  ['POST', '/api/agents/:a/tool-calls'],
  ['POST', '/api/agents/:a/email/analyze'],
  ['POST', '/api/agents/:a/workflows/email'],
  ['POST', '/api/agents/:a/documents'],
  ['GET', '/api/agents/:a/documents'],
  ['DELETE', '/api/agents/:a/documents/:d'],
  ['POST', '/api/agents/:a/documents/search'],
  ['POST', '/api/agents/:a/documents/ask'],
  ['GET', '/api/agents/:a/tasks'],
  ['POST', '/api/agents/:a/chat'],
  ['GET', '/api/agents/:a/access-rules'],
  ['POST', '/api/agents/:a/access-rules'],
  ['DELETE', '/api/agents/:a/access-rules/:r'],
  ['POST', '/api/agents/:a/messages'],
  ['POST', '/api/agents/:a/runs'],
  ['GET', '/api/agents/:a/runs'],
  ['GET', '/api/agents/:a/threads'],
  ['GET', '/api/agents/:a/threads/:d'],
  ['POST', '/api/migrations/enabled-tools'],
  ['GET', '/healthz'],
  ['GET', '/readyz'],
];

const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '\u0000',
    'a\r\nb',
    '\u202e',
    '%00',
    '../../etc/passwd',
    "'; DROP TABLE agents; --",
    '__proto__',
    'constructor',
    '*@thescoop.com',
    'mara@thescoop.com',
    'Mara <mara+x@TheScoop.com>',
    'x'.repeat(5000),
  ),
);

/** Names a lookup in a plain object would find on Object.prototype (hostile review, finding 2). */
const prototypeName = fc.constantFrom(...Object.getOwnPropertyNames(Object.prototype));

const NON_ASCII_LETTERS = ['é', 'ü', 'ж', 'ß', 'ø', '中', 'ą', 'ñ'];
/**
 * Senders whose domains are non-ASCII, on both sides of every limit once punycode: labels of 6 to 76
 * characters, domains and whole addresses up to and past 253 and 320 (hostile review, finding 1).
 */
const longUnicodeSender = fc
  .record({
    letter: fc.constantFrom(...NON_ASCII_LETTERS),
    // 58 or more make a label over 63 characters once punycode: both sides of that limit are drawn.
    labelLength: fc.integer({ min: 1, max: 70 }),
    labels: fc.integer({ min: 1, max: 40 }),
    localLength: fc.integer({ min: 1, max: 120 }),
    tld: fc.constantFrom('com', 'thescoop.com', 'de'),
  })
  .map(
    ({ letter, labelLength, labels, localLength, tld }) =>
      `${'m'.repeat(localLength)}@${Array.from({ length: labels }, () => letter.repeat(labelLength)).join('.')}.${tld}`,
  )
  .filter((sender) => sender.length <= 320);

const idSegment = fc.oneof(
  fc.constantFrom('1', '0', '-1', '2147483648', '99999999999999999999', '1.5', '1e3', 'abc', '%20', '%00', '__proto__', ' 1'),
  fc.nat({ max: 50 }).map(String),
);

const jsonValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(
        hostileString,
        fc.constantFrom(
          'from',
          'body',
          'name',
          'member_tool_ids',
          'pattern',
          'kind',
          'tool',
          'input',
          'sender',
          'scheduled',
          'toolkit_id',
          'rules',
          'message',
          'thread_id',
          'instruction',
          '__proto__',
        ),
      ),
      tie('value'),
      { maxKeys: 5 },
    ),
  ),
})).value;

/** Bodies shaped like the real ones but with hostile values, so validation is exercised deeply. */
const shapedBody = fc.record(
  {
    from: jsonValue,
    sender: jsonValue,
    body: jsonValue,
    subject: jsonValue,
    name: jsonValue,
    member_tool_ids: jsonValue,
    kind: fc.oneof(fc.constantFrom('allow', 'deny'), jsonValue),
    pattern: jsonValue,
    tool: fc.oneof(fc.constantFrom('process_refund', 'lookup_order', 'email_analyzer', 'send_email'), prototypeName, jsonValue),
    input: jsonValue,
    scheduled: fc.oneof(fc.constant(true), jsonValue),
    toolkit_id: jsonValue,
    rules: jsonValue,
    query: jsonValue,
    question: jsonValue,
    top_k: jsonValue,
    message: jsonValue,
    title: jsonValue,
    content: jsonValue,
    dry_run: fc.oneof(fc.boolean(), jsonValue),
    map_typos: fc.oneof(fc.boolean(), jsonValue),
    enabled_tools: fc.oneof(fc.constantFrom('email_analyzer, Task-Creator,,', ''), jsonValue),
    thread_id: jsonValue,
    instruction: jsonValue,
    authentication_results: jsonValue,
  },
  { requiredKeys: [] },
);

const deepNesting = fc.integer({ min: 100, max: 5000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth));

const rawBody = fc.oneof(
  jsonValue.map((v) => JSON.stringify(v) ?? 'null'),
  shapedBody.map((v) => JSON.stringify(v)),
  deepNesting,
  fc.constantFrom(
    '{',
    '{"from": "a@b.com"',
    'null',
    '[]',
    '"string"',
    '{"a":1}{"b":2}',
    '\u0000',
    '{"__proto__": {"admin": true}}',
    'x'.repeat(70_000),
  ),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

const token = fc.constantFrom<string | null>(null, ADMIN_TOKEN, CLIENT_TOKEN, SCHEDULER_TOKEN, 'wrong-token-wrong-token', 'Bearer', '');
const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=latin1',
  '',
);

const hostileRequest = fc.record({
  route: fc.constantFrom(...ROUTES),
  ids: fc.record({
    a: fc.oneof(fc.constant('AGENT'), idSegment),
    k: fc.oneof(fc.constant('TOOLKIT'), idSegment),
    t: fc.oneof(fc.constant('ATTACHMENT'), idSegment),
    r: idSegment,
    d: idSegment,
  }),
  token,
  contentType,
  body: rawBody,
  query: fc.dictionary(fc.constantFrom('sender', 'scheduled', 'limit', 'after', 'name', 'x'), hostileString, { maxKeys: 3 }),
});

function pathOf(template: string, ids: Record<string, string>): string {
  return template
    .replace(':a', ids.a === 'AGENT' ? String(agent) : ids.a)
    .replace(':k', ids.k === 'TOOLKIT' ? String(toolkit) : ids.k)
    .replace(':t', ids.t === 'ATTACHMENT' ? String(attachment ?? 0) : ids.t)
    .replace(':r', ids.r)
    .replace(':d', ids.d);
}

describe('when generated hostile requests hit every route', () => {
  test('then no answer is a 500, and every error has the HTTP.md shape', async () => {
    await fc.assert(
      fc.asyncProperty(hostileRequest, async (r) => {
        await ensureFixtures();
        const [method, template] = r.route;
        const path = pathOf(template, r.ids);
        let req = request(t.app)[method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete'](path).query(r.query);
        if (r.token !== null) req = req.set('Authorization', `Bearer ${r.token}`);
        if (method !== 'GET') {
          if (r.contentType) req = req.set('Content-Type', r.contentType);
          req = req.send(r.body);
        }
        const res = await req;
        sent++;
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.body).toEqual(expect.objectContaining({ code: expect.any(String), detail: expect.anything() }));
          expect(JSON.stringify(res.body)).not.toMatch(/\bat [\w.<>]+ \(.*:\d+:\d+\)/);
        }
      }),
      { numRuns: RUNS * 4 },
    );
  });

  test('then a gated tool is never dispatched for a sender outside the gate', async () => {
    await ensureFixtures();
    await fc.assert(
      fc.asyncProperty(hostileString, jsonValue, async (sender, input) => {
        const res = await request(t.app)
          .post(`/api/agents/${agent}/tool-calls`)
          .set('Authorization', `Bearer ${CLIENT_TOKEN}`)
          .send({ tool: 'process_refund', input, sender });
        sent++;
        // Only a sender at thescoop.com may pass the gate; any other is refused (403) or its
        // request rejected as malformed (422), never served.
        if (!/@thescoop\.com>?$/i.test(sender)) expect([403, 422]).toContain(res.status);
        expect(res.status).toBeLessThan(500);
      }),
      { numRuns: RUNS },
    );
    const [granted] = await t.sequelize.query<{ n: string }>(
      "SELECT count(*) AS n FROM tool_calls WHERE tool_id = 'process_refund' AND status = 'success' AND (routing_key IS NULL OR routing_key NOT LIKE '%@thescoop.com')",
      { type: QueryTypes.SELECT },
    );
    expect(granted.n).toBe('0');
  });

  test('then senders with long non-ASCII domains get no key past the limits, and every call that runs is recorded', async () => {
    // An open attachment runs the tool whatever the sender, so every request ends in a record.
    const open = await makeToolkit(t, `Open lookups ${sent}`, ['lookup_order']);
    const openAgent = await makeAgent(t, { name: 'Open', toolkit_ids: [open] });
    let keyed = 0;
    let overLongLabel = 0;
    await fc.assert(
      fc.asyncProperty(longUnicodeSender, async (sender) => {
        const res = await request(t.app)
          .post(`/api/agents/${openAgent}/tool-calls`)
          .set('Authorization', `Bearer ${CLIENT_TOKEN}`)
          .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender });
        sent++;
        expect(res.status).toBe(200);
        const [record] = await t.sequelize.query<{ status: string; routing_key: string | null }>(
          'SELECT status, routing_key FROM tool_calls WHERE agent_id = :a ORDER BY id DESC LIMIT 1',
          { replacements: { a: openAgent }, type: QueryTypes.SELECT },
        );
        expect(record?.status).toBe('success');
        const key = record?.routing_key ?? null;
        const labels = domainToASCII(sender.slice(sender.indexOf('@') + 1)).split('.');
        if (labels.some((label) => label.length > 63)) {
          overLongLabel++;
          expect(key).toBeNull();
        }
        if (key !== null) {
          keyed++;
          expect(key.length).toBeLessThanOrEqual(320);
          const domain = key.slice(key.indexOf('@') + 1);
          expect(domain.length).toBeLessThanOrEqual(253);
          for (const label of domain.split('.')) expect(label.length).toBeLessThanOrEqual(63);
        }
      }),
      { numRuns: RUNS },
    );
    // Both sides of the limits were reached: some senders keep a key, some lose it, some for a label.
    expect(keyed).toBeGreaterThan(0);
    expect(keyed).toBeLessThan(RUNS);
    expect(overLongLabel).toBeGreaterThan(0);
  });

  test('then a tool id named after Object.prototype is refused and recorded, never a 500', async () => {
    await ensureFixtures();
    const names = Object.getOwnPropertyNames(Object.prototype);
    const deniedRecords = async () =>
      Number(
        (
          await t.sequelize.query<{ n: string }>("SELECT count(*) AS n FROM tool_calls WHERE tool_id IN (:names) AND status = 'denied'", {
            replacements: { names },
            type: QueryTypes.SELECT,
          })
        )[0]?.n,
      );
    const before = await deniedRecords();
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(prototypeName, fc.constantFrom('mara@thescoop.com', 'jane@acme.com'), async (tool, sender) => {
        const res = await request(t.app)
          .post(`/api/agents/${agent}/tool-calls`)
          .set('Authorization', `Bearer ${CLIENT_TOKEN}`)
          .send({ tool, sender });
        sent++;
        // Known in advance: a snake_case name is a tool id nobody offers, anything else no tool id.
        const wellFormed = toolIdSchema.safeParse(tool).success;
        expect(res.status).toBe(wellFormed ? 403 : 422);
        expect(res.body).toMatchObject(wellFormed ? { code: 'tool_forbidden', tool } : { code: 'validation_error' });
        if (wellFormed) refused++;
      }),
      // "constructor" is the one snake_case name: drawn at least once, so a refusal is always seen.
      { numRuns: RUNS / 5, examples: [['constructor', 'mara@thescoop.com']] },
    );
    expect(refused).toBeGreaterThan(0);
    // One denied record per refusal.
    expect((await deniedRecords()) - before).toBe(refused);
  });

  afterAll(() => {
    // The figure docs/SECURITY.md quotes: requests sent per run of this file.
    expect(sent).toBeGreaterThanOrEqual(RUNS * 6 + RUNS / 5);
  });
});
