// The wrapper that makes each model call a `chat` span, and the trace context a tool is given, with
// no database: named by the model's own provider and name (or as a host's), told the answer's report
// only within the call, text only with content on, and nothing of the host's baggage passed on.
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { AgentStepRequest } from '../../src/llm/agent-step';
import type { LanguageModel } from '../../src/llm/language-model';
import { LocalModel } from '../../src/llm/local-model';
import { reportAnswer } from '../../src/llm/model-answer';
import { messageList } from '../../src/tracing/span-content';
import { ToolgateTracing } from '../../src/tracing/toolgate-tracing';
import { tracedModel } from '../../src/tracing/traced-model';
import { TRACING_DEFAULTS } from '../../src/tracing/tracing-options';

/** The most of one text a span carries with content on, as SEMANTICS §16 gives it. */
const CONTENT_CHARS = 8_000;

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
// Registers the W3C trace context and baggage propagators too, as a host's SDK would.
provider.register();
afterAll(() => provider.shutdown());
beforeEach(() => exporter.reset());

const ctx = { agentName: 'Sundae', systemPrompt: 'Be brief.', now: new Date('2026-12-04T10:00:00Z') };

/** A host's model that names nothing, and reports an answer as a provider's client would. */
const hostModel: LanguageModel = {
  analyzeEmail: () => Promise.reject(new Error('not used')),
  writeReply: () => Promise.reject(new Error('not used')),
  answerQuestion: () => Promise.reject(new Error('not used')),
  chat: async (message) => {
    reportAnswer({ responseModel: 'house-1', finishReasons: ['stop'], inputTokens: 7, outputTokens: 3 });
    return `You said: ${message}`;
  },
  agentStep: (request: AgentStepRequest) => Promise.resolve({ kind: 'reply', text: `${request.turns.length} turns` }),
};

test("when the local model is asked, then the call is a chat span named by toolgate's own provider, with no text by default", async () => {
  await tracedModel(new LocalModel(), TRACING_DEFAULTS).chat('Where is my order?', ctx);
  const [span] = exporter.getFinishedSpans();
  expect(span).toMatchObject({
    name: 'chat toolgate-local',
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'toolgate.local',
      'gen_ai.request.model': 'toolgate-local',
      'toolgate.model.call': 'chat',
    },
  });
  expect(JSON.stringify(span!.attributes)).not.toMatch(/Where is my order|Be brief/);
});

test("when a host's model names nothing, then its span is `chat` by the host's provider, and carries what it reported of its answer", async () => {
  await tracedModel(hostModel, { routingKey: 'none', content: true }).chat('hello', ctx);
  const [span] = exporter.getFinishedSpans();
  expect(span!.name).toBe('chat');
  expect(span!.attributes).toMatchObject({
    'gen_ai.provider.name': 'toolgate.host',
    'gen_ai.response.model': 'house-1',
    'gen_ai.response.finish_reasons': ['stop'],
    'gen_ai.usage.input_tokens': 7,
    'gen_ai.usage.output_tokens': 3,
    'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'hello' }] }]),
    'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'You said: hello' }] }]),
  });
  expect(span!.attributes['gen_ai.request.model']).toBeUndefined();
});

test('when a model reports an answer outside a traced call, then no one is told and nothing fails', async () => {
  await expect(hostModel.chat('hello', ctx)).resolves.toBe('You said: hello');
  expect(exporter.getFinishedSpans()).toEqual([]);
});

test("when a tool is given its span's trace context, then it is the span's traceparent alone, never the host's baggage", () => {
  const tracing = new ToolgateTracing();
  const withBaggage = propagation.setBaggage(context.active(), propagation.createBaggage({ customer: { value: 'jane@acme.com' } }));
  const carrier = context.with(withBaggage, () => {
    const span = trace.getTracer('test').startSpan('execute_tool lookup_order');
    const found = tracing.traceContext(span);
    span.end();
    return { found, span: span.spanContext() };
  });
  expect(carrier.found).toEqual({ traceparent: `00-${carrier.span.traceId}-${carrier.span.spanId}-01` });
});

test("when a run's conversation is long, then a span keeps its newest messages within the bound", () => {
  const turn = { role: 'user' as const, parts: [{ type: 'text' as const, content: 'x'.repeat(CONTENT_CHARS * 2) }] };
  const list = JSON.parse(
    messageList([...Array.from({ length: 10 }, () => turn), { role: 'assistant', parts: [{ type: 'text', content: 'last' }] }]),
  );
  expect(JSON.stringify(list).length).toBeLessThanOrEqual(CONTENT_CHARS * 4);
  expect(list.at(-1)).toEqual({ role: 'assistant', parts: [{ type: 'text', content: 'last' }] });
  expect(list[0].parts[0].content).toHaveLength(CONTENT_CHARS);
});
