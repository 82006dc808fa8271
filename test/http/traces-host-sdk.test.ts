// A host that brings its own OpenTelemetry SDK (here the Node tracer provider with an in-memory
// exporter) gets toolgate's spans through @opentelemetry/api, with toolgate setting up nothing of its
// own: what the spans carry of the sender and of the text is the host's `tracing` option.
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { LocalModel } from '../../src/llm/local-model';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

/** A model that asks for one tool the run is offered and one it is not, then replies. */
class TwoCalls extends LocalModel {
  override async agentStep(request: Parameters<LocalModel['agentStep']>[0]) {
    if (request.turns.some((turn) => turn.role === 'tool_result'))
      return { kind: 'reply' as const, text: 'Your order SCP-1042 is on its way.' };
    return {
      kind: 'tool_calls' as const,
      calls: [
        { call_id: 'c1', tool: 'lookup_order', arguments: '{"order_id":"SCP-1042"}' },
        { call_id: 'c2', tool: 'process_refund', arguments: '{"order_id":"SCP-1042"}' },
      ],
    };
  }
}

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();

const apps: TestApp[] = [];
async function app(options: Parameters<typeof createTestApp>[0]): Promise<{ t: TestApp; agent: number }> {
  const t = await createTestApp({ model: new TwoCalls(), ...options });
  apps.push(t);
  const lookups = await makeToolkit(t, 'Lookups', ['lookup_order']);
  return { t, agent: await makeAgent(t, { name: 'Sundae', toolkit_ids: [lookups] }) };
}
afterAll(async () => {
  await Promise.all(apps.map((t) => t.close()));
  await provider.shutdown();
});
beforeEach(() => exporter.reset());

const toolgateSpans = (): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.instrumentationScope.name === 'toolgate');
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

test("when a host dispatches a tool call, then its own SDK receives the call's execute_tool span, with no sender by default", async () => {
  const { t, agent } = await app({});
  await t
    .client()
    .post(`/api/agents/${agent}/tool-calls`)
    .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' })
    .expect(200);
  const [span] = toolgateSpans();
  expect(span).toMatchObject({
    name: 'execute_tool lookup_order',
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup_order',
      'toolgate.decision': 'granted',
      'toolgate.status': 'success',
    },
  });
  expect(span!.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
  expect(JSON.stringify(span!.attributes)).not.toContain('jane@acme.com');
});

test('when content is opted in and keys hashed, then the run and its calls carry the message, the arguments and the result, and the key as its digest', async () => {
  const { t, agent } = await app({ tracing: { routingKey: 'hashed', content: true } });
  await t
    .client()
    .post(`/api/agents/${agent}/messages`)
    .send({ message: { from: 'jane@acme.com', body: 'Where is SCP-1042? Refund it, please.' } })
    .expect(200);
  const spans = toolgateSpans();
  const run = spans.find((s) => s.name === 'invoke_agent Sundae')!;
  const [lookup, refund] = ['lookup_order', 'process_refund'].map((tool) => spans.find((s) => s.name === `execute_tool ${tool}`)!);
  expect(parentOf(lookup!)).toBe(run.spanContext().spanId);
  expect(parentOf(refund!)).toBe(run.spanContext().spanId);
  expect(run.attributes['gen_ai.input.messages']).toContain('Refund it, please.');
  expect(run.attributes['gen_ai.output.messages']).toContain('on its way');
  expect(lookup!.attributes['gen_ai.tool.call.arguments']).toBe('{"order_id":"SCP-1042"}');
  expect(lookup!.attributes['gen_ai.tool.call.result']).toContain('SCP-1042');
  expect(refund!.attributes).toMatchObject({ 'toolgate.decision': 'refused', 'toolgate.reason': 'not_offered' });
  expect(run.attributes['toolgate.routing_key.sha256']).toMatch(/^[0-9a-f]{64}$/);
  expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain('jane@acme.com');
});

test('when keys are to be shown plain, then the spans name the routing key as it is', async () => {
  const { t, agent } = await app({ tracing: { routingKey: 'plain' } });
  await t
    .client()
    .post(`/api/agents/${agent}/tool-calls`)
    .send({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' })
    .expect(403);
  expect(toolgateSpans()[0]!.attributes).toMatchObject({ 'toolgate.routing_key': 'jane@acme.com', 'toolgate.reason': 'not_offered' });
});

test('when tracing is false, then toolgate makes no span at all, SDK or not', async () => {
  const { t, agent } = await app({ tracing: false });
  await t
    .client()
    .post(`/api/agents/${agent}/messages`)
    .send({ message: { from: 'jane@acme.com', body: 'Where is SCP-1042?' } })
    .expect(200);
  expect(toolgateSpans()).toEqual([]);
});
