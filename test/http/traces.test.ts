// Decisions as spans, as the service exports them (SEMANTICS §16): the service, started as an
// operator starts it with OTEL_EXPORTER_OTLP_ENDPOINT set, sends OTLP/HTTP JSON to a receiver in this
// test. An agent run is an invoke_agent span and its tool call an execute_tool child, with the GenAI
// attributes and toolgate's decision; a refused dispatch says its reason; and without the opt-in no
// span holds the message, the arguments, the result or the sender. SIGTERM exports what is left.
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { shellEnv, startService, type StoppedService } from '../support/service-process';

jest.setTimeout(120_000);

const ADMIN = 'traces-admin-token-0123456789abcdef';
const CLIENT = 'traces-client-token-0123456789abcdef';
const BODY = 'Where is my order SCP-1042? It never came.';

let db: TestDatabase;
let receiver: OtlpReceiver;
let stopped: StoppedService;
let agent: number;
let records: { id: number; tool_id: string; status: string; policy_version: number }[];

async function call(url: string, method: string, token: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  db = await createTestDatabase();
  receiver = await startOtlpReceiver();
  const service = await startService({
    env: {
      ...shellEnv(),
      DATABASE_URL: db.url,
      TOOLGATE_ADMIN_TOKEN: ADMIN,
      TOOLGATE_CLIENT_TOKENS: CLIENT,
      // The Scoop's tools and agents: Sundae offers lookup_order to anyone, process_refund to the shop's staff only.
      TOOLGATE_DEMO: 'on',
      TOOLGATE_RATE_LIMIT: 'off',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    },
  });
  try {
    const api = `${service.url}/api`;
    const agents = (await call(`${api}/agents`, 'GET', ADMIN)).body as { id: number; name: string }[];
    agent = agents.find((a) => a.name === 'Sundae')!.id;
    const ran = await call(`${api}/agents/${agent}/messages`, 'POST', CLIENT, { message: { from: 'jane@acme.com', body: BODY } });
    expect((ran.body as { steps: unknown }).steps).toMatchObject([{ tool: 'lookup_order', status: 'success' }]);
    const refused = await call(`${api}/agents/${agent}/tool-calls`, 'POST', CLIENT, {
      tool: 'process_refund',
      input: { order_id: 'SCP-1042' },
      sender: 'jane@acme.com',
    });
    expect(refused.status).toBe(403);
    records = (await call(`${api}/agents/${agent}/tool-calls`, 'GET', ADMIN)).body as typeof records;
  } finally {
    stopped = await service.stop();
  }
});
afterAll(async () => {
  await receiver.close();
  await db.drop();
});

const recordOf = (tool: string) => records.find((r) => r.tool_id === tool)!;
const spanOf = (recordId: number): ReceivedSpan | undefined =>
  receiver.spans.find((s) => s.attributes['gen_ai.tool.call.id'] === String(recordId));

test('when the service stops on SIGTERM, then it has exported its spans to the OTLP endpoint, as JSON', () => {
  expect(stopped.code).toBe(0);
  expect(receiver.spans.length).toBeGreaterThan(0);
  expect(receiver.contentTypes.every((type) => type.startsWith('application/json'))).toBe(true);
  expect(stopped.lines.some((line) => line.includes('exporting traces over OTLP/HTTP'))).toBe(true);
});

test("when an agent run calls a tool, then the call's execute_tool span is a child of the run's invoke_agent span", () => {
  const tool = spanOf(recordOf('lookup_order').id)!;
  const run = receiver.spans.find((s) => s.spanId === tool.parentSpanId)!;
  expect(run).toMatchObject({
    name: 'invoke_agent Sundae',
    traceId: tool.traceId,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': String(agent),
      'toolgate.agent.id': agent,
      'toolgate.stopped': 'reply',
    },
  });
  expect(tool).toMatchObject({
    name: 'execute_tool lookup_order',
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup_order',
      'toolgate.agent.id': agent,
      'toolgate.decision': 'granted',
      'toolgate.status': 'success',
      'toolgate.policy_version': recordOf('lookup_order').policy_version,
    },
  });
});

test('when a dispatch is refused, then its execute_tool span names the record, the decision and the reason', () => {
  const refused = recordOf('process_refund');
  expect(refused.status).toBe('denied');
  expect(spanOf(refused.id)).toMatchObject({
    name: 'execute_tool process_refund',
    attributes: {
      'gen_ai.tool.name': 'process_refund',
      'toolgate.decision': 'refused',
      'toolgate.reason': 'not_offered',
      'toolgate.policy_version': refused.policy_version,
    },
  });
});

test('when content is not opted in, then no span holds the message, the arguments, the result or the sender', () => {
  const text = JSON.stringify(receiver.spans);
  expect(text).not.toContain('never came');
  expect(text).not.toContain('SCP-1042');
  expect(text).not.toContain('jane@acme.com');
  expect(receiver.spans.flatMap((s) => Object.keys(s.attributes)).filter((key) => key.startsWith('toolgate.routing_key'))).toEqual([]);
});
