// What an on-call engineer follows from a run into the model and into the tools, with the host's own
// SDK (the Node tracer provider, an in-memory exporter): each model call a `chat` span under the
// run's `invoke_agent`, with the model's answer and its token usage; a host tool running with its
// `execute_tool` span active; an MCP server told that span's trace context in `_meta`. With tracing
// off, none of it.
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { z } from 'zod';
import { SCOOP_TOOLS } from '../../src/app/demo/scoop-tools';
import { OpenAIModel } from '../../src/llm/openai-model';
import type { ToolgateOptions } from '../../src/toolgate';
import { defineTool } from '../../src/tools/tool-registry';
import { createTestApp, type TestApp } from '../support/app';
import { apiError, completion, startFakeOpenAI, toolCalls, type FakeOpenAI } from '../support/fake-openai';
import { makeAgent, makeToolkit } from '../support/factories';
import { startMcpTestServer, type McpTestServer } from '../support/mcp-test-server';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();

const TOKEN = `tok-${Math.random().toString(36).slice(2)}`;
const KEY = `key-${Math.random().toString(36).slice(2)}`;
process.env.TRACE_FREEZER_TOKEN = TOKEN;
process.env.TRACE_FREEZER_KEY = KEY;

/** The span ids a host tool saw active while it ran, one per call. */
const seen: (string | undefined)[] = [];
const probe = defineTool({
  id: 'trace_probe',
  display_name: 'Trace probe',
  summary: 'Says which span is active while it runs.',
  input: z.object({}),
  execute: () => {
    seen.push(trace.getActiveSpan()?.spanContext().spanId);
    return { ok: true };
  },
});

let fake: FakeOpenAI;
let freezer: McpTestServer;
const apps: TestApp[] = [];

/** An app whose model is the OpenAI-compatible client on the fake server, with the freezer's MCP tools and the probe. */
async function app(tracing: ToolgateOptions['tracing']): Promise<{ t: TestApp; agent: number }> {
  const t = await createTestApp({
    model: new OpenAIModel({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'gpt-test', timeoutMs: 5_000, maxRetries: 0 }),
    tools: [...SCOOP_TOOLS, probe],
    mcp: {
      mcpServers: {
        freezer: {
          url: `${freezer.url}?key=\${TRACE_FREEZER_KEY}`,
          headers: { Authorization: 'Bearer ${TRACE_FREEZER_TOKEN}' },
          timeoutMs: 2_000,
        },
      },
    },
    ...(tracing === undefined ? {} : { tracing }),
  });
  apps.push(t);
  const kit = await makeToolkit(t, 'Support', ['lookup_order', 'trace_probe', 'freezer__check_stock']);
  return { t, agent: await makeAgent(t, { name: 'Sundae', system_prompt: 'Be brief.', toolkit_ids: [kit] }) };
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  freezer = await startMcpTestServer(TOKEN, KEY);
});
afterAll(async () => {
  await Promise.all(apps.map((t) => t.close()));
  await fake.close();
  await freezer.close();
  await provider.shutdown();
});
beforeEach(() => {
  exporter.reset();
  fake.requests.length = 0;
});

const toolgateSpans = (): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.instrumentationScope.name === 'toolgate');
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
/** A lookup, then the reply: the run's two model steps. */
const lookupThenReply = () =>
  fake.script((_request, index) =>
    index === 0 ? toolCalls([['lookup_order', '{"order_id":"SCP-1042"}']]) : completion('Your order SCP-1042 ships today.'),
  );
const jane = { from: 'jane@acme.com', subject: 'Refund?', body: 'Where is SCP-1042? Refund it, please.' };

describe('when an agent run asks the OpenAI-compatible model', () => {
  test("then each step is a chat span under the run's invoke_agent, with the model, the finish reason and the tokens, and no text", async () => {
    const { t, agent } = await app(undefined);
    lookupThenReply();
    await t.client().post(`/api/agents/${agent}/messages`).send({ message: jane }).expect(200);
    const spans = toolgateSpans();
    const run = spans.find((s) => s.name === 'invoke_agent Sundae')!;
    const chats = spans.filter((s) => s.name === 'chat gpt-test');
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(parentOf(chat)).toBe(run.spanContext().spanId);
      expect(chat.kind).toBe(2); // SpanKind.CLIENT
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-test',
        'gen_ai.response.model': 'gpt-test',
        'gen_ai.usage.input_tokens': 120,
        'toolgate.model.call': 'agent_step',
      });
    }
    expect(chats.map((c) => c.attributes['gen_ai.response.finish_reasons'])).toEqual([['tool_calls'], ['stop']]);
    expect(chats.map((c) => c.attributes['gen_ai.usage.output_tokens'])).toEqual([20, 80]);
    // The tool call the first step asked for sits between the two steps, under the run too.
    const lookup = spans.find((s) => s.name === 'execute_tool lookup_order')!;
    expect(parentOf(lookup)).toBe(run.spanContext().spanId);
    const text = JSON.stringify(spans.map((s) => s.attributes));
    for (const words of ['Refund it, please', 'ships today', 'Be brief', 'SCP-1042']) expect(text).not.toContain(words);
  });

  test('then with content opted in, the chat spans carry the system prompt, the conversation and the answer', async () => {
    const { t, agent } = await app({ content: true });
    lookupThenReply();
    await t.client().post(`/api/agents/${agent}/messages`).send({ message: jane }).expect(200);
    const [first, second] = toolgateSpans().filter((s) => s.name === 'chat gpt-test');
    expect(first!.attributes['gen_ai.system_instructions']).toContain('Be brief.');
    expect(first!.attributes['gen_ai.input.messages']).toContain('Refund it, please.');
    expect(JSON.parse(first!.attributes['gen_ai.output.messages'] as string)).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call_0_lookup_order', name: 'lookup_order', arguments: '{"order_id":"SCP-1042"}' }],
      },
    ]);
    expect(second!.attributes['gen_ai.input.messages']).toContain('tool_call_response');
    expect(second!.attributes['gen_ai.output.messages']).toContain('ships today');
    expect(JSON.stringify(toolgateSpans().map((s) => s.attributes))).not.toContain('jane@acme.com');
  });

  test("then a model that fails makes its chat span an error, by the failure's kind", async () => {
    const { t, agent } = await app(undefined);
    fake.script(() => apiError(500, 'the provider is down'));
    await t.client().post(`/api/agents/${agent}/messages`).send({ message: jane });
    const chat = toolgateSpans().find((s) => s.name === 'chat gpt-test')!;
    expect(chat.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(chat.attributes['error.type']).toBe('upstream');
  });
});

describe('when a tool runs', () => {
  test('then a host tool runs with its execute_tool span active, so what it calls out to is beneath it', async () => {
    const { t, agent } = await app(undefined);
    seen.length = 0;
    await t.client().post(`/api/agents/${agent}/tool-calls`).send({ tool: 'trace_probe', input: {}, sender: 'jane@acme.com' }).expect(200);
    const span = toolgateSpans().find((s) => s.name === 'execute_tool trace_probe')!;
    expect(seen).toEqual([span.spanContext().spanId]);
  });

  test("then an MCP server is sent the execute_tool span's traceparent in _meta, beside the record id", async () => {
    const { t, agent } = await app(undefined);
    const before = freezer.calls.length;
    const res = await t
      .client()
      .post(`/api/agents/${agent}/tool-calls`)
      .send({ tool: 'freezer__check_stock', input: { flavor: 'vanilla' }, sender: 'jane@acme.com' })
      .expect(200);
    expect(res.body.status).toBe('success');
    const span = toolgateSpans().find((s) => s.name === 'execute_tool freezer__check_stock')!;
    const [call] = freezer.calls.slice(before);
    const { traceId, spanId } = span.spanContext();
    expect(call!.meta).toMatchObject({
      'toolgate/call_id': Number(span.attributes['gen_ai.tool.call.id']),
      traceparent: `00-${traceId}-${spanId}-01`,
    });
    expect(Object.keys(call!.meta!).sort()).toEqual(['toolgate/call_id', 'traceparent']);
  });
});

test('when tracing is false, then no model call, tool or MCP request makes a span or carries a traceparent', async () => {
  const { t, agent } = await app(false);
  lookupThenReply();
  seen.length = 0;
  const before = freezer.calls.length;
  await t.client().post(`/api/agents/${agent}/messages`).send({ message: jane }).expect(200);
  await t.client().post(`/api/agents/${agent}/tool-calls`).send({ tool: 'trace_probe', input: {}, sender: 'jane@acme.com' }).expect(200);
  await t
    .client()
    .post(`/api/agents/${agent}/tool-calls`)
    .send({ tool: 'freezer__check_stock', input: { flavor: 'vanilla' }, sender: 'jane@acme.com' })
    .expect(200);
  expect(toolgateSpans()).toEqual([]);
  // Whatever span the host's HTTP server would have made, toolgate made none for the probe to see.
  expect(seen).toEqual([undefined]);
  expect(freezer.calls.slice(before).map((c) => c.meta)).toEqual([{ 'toolgate/call_id': expect.any(Number) }]);
});
