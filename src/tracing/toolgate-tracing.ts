// Decisions as OpenTelemetry spans (SEMANTICS §16), through @opentelemetry/api alone: a host that
// registers its own SDK gets them, one that registers none gets the API's no-op spans, and toolgate
// keeps no global state of its own. An agent run is an `invoke_agent` span; each tool-call record
// (a call that ran, a refusal, a skip, a call filed for approval) is an `execute_tool` span under
// whatever span is active, the run's when a model made the call. Attribute names follow the GenAI
// semantic conventions (gen_ai.*), with toolgate's own beside them (toolgate.*).
//
// Private by default: the sender's routing key only as configured, and the message's text, the
// reply, a tool's arguments and its result only with `content: true`. Nothing is computed for a
// span that is not recording.
import { createHash } from 'node:crypto';
import {
  context,
  propagation,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import type { ToolCallStatus } from '../../models/tool-call';
import type { ToolCallRecord } from '../services/tool-calls';
import { json, messages } from './span-content';
import { TRACING_DEFAULTS, type TracingSettings } from './tracing-options';

/** The name toolgate's tracer goes by: a host's SDK may sample or filter on it. */
export const TRACER_NAME = 'toolgate';

/** What a dispatch decided, as `toolgate.decision` says it: from the record's status. */
const DECISIONS: Partial<Record<ToolCallStatus, string>> = {
  started: 'granted',
  denied: 'refused',
  skipped: 'skipped',
  pending_approval: 'requested',
};

/** What an `invoke_agent` span is told of its run before it starts. */
export interface TracedRun {
  agent: { id: number; name: string };
  kind: 'sender' | 'scheduled';
  routingKey: string | null;
  policyVersion: number | null;
  tools: readonly string[];
  threadId: number | null;
  /** The message's body or the instruction: carried only when content is on. */
  text: string;
}

/** What an `invoke_agent` span is told when its run ends. */
export interface TracedRunEnd {
  stopped: string;
  reply: string | null;
  steps: readonly unknown[];
}

/** The W3C Trace Context's own keys: what a tool is given to pass on, and nothing else. */
const TRACE_CONTEXT_KEYS: ReadonlySet<string> = new Set(['traceparent', 'tracestate']);

const TRACE_CONTEXT_SETTER: TextMapSetter<Record<string, string>> = {
  set(carrier, key, value) {
    if (TRACE_CONTEXT_KEYS.has(key)) carrier[key] = value;
  },
};

type RecordFields = Pick<ToolCallRecord, 'agent_id' | 'tool_id' | 'run' | 'routing_key' | 'status' | 'policy_version' | 'reason'>;

export class ToolgateTracing {
  readonly #tracer: Tracer;
  readonly #settings: TracingSettings;

  constructor(settings: TracingSettings = TRACING_DEFAULTS) {
    // The API's proxy: it reaches whichever provider the host registers, before or after this.
    this.#tracer = trace.getTracer(TRACER_NAME);
    this.#settings = settings;
  }

  /** Runs `work` as the active `invoke_agent` span, so the tool calls it makes are its children. */
  async agentRun<E extends TracedRunEnd>(run: TracedRun, work: () => Promise<E>): Promise<E> {
    const span = this.#tracer.startSpan(`invoke_agent ${run.agent.name}`);
    if (span.isRecording()) {
      span.setAttributes({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.id': String(run.agent.id),
        'gen_ai.agent.name': run.agent.name,
        'toolgate.agent.id': run.agent.id,
        'toolgate.run': run.kind,
        'toolgate.tools_offered': [...run.tools],
        ...(run.threadId === null ? {} : { 'gen_ai.conversation.id': String(run.threadId) }),
        ...(run.policyVersion === null ? {} : { 'toolgate.policy_version': run.policyVersion }),
        ...this.#routingKey(run.routingKey),
      });
      if (this.#settings.content) span.setAttribute('gen_ai.input.messages', messages('user', run.text));
    }
    try {
      const end = await context.with(trace.setSpan(context.active(), span), work);
      if (span.isRecording()) {
        span.setAttributes({ 'toolgate.stopped': end.stopped, 'toolgate.steps': end.steps.length });
        if (this.#settings.content && end.reply !== null) span.setAttribute('gen_ai.output.messages', messages('assistant', end.reply));
      }
      return end;
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      if (span.isRecording()) span.setAttribute('error.type', err instanceof Error ? err.name : 'Error');
      throw err;
    } finally {
      span.end();
    }
  }

  /**
   * A record complete as it stands (a refusal, a skip, a call filed for approval): one span that
   * begins and ends now. `id` is the record's; null for a filed call, named by its request instead.
   */
  recorded(record: RecordFields, id: number | null, approvalRequestId: number | null = null): void {
    const span = this.#tracer.startSpan(`execute_tool ${record.tool_id}`);
    if (span.isRecording()) {
      span.setAttributes(this.#toolAttributes(record, id));
      span.setAttribute('toolgate.status', record.status);
      if (approvalRequestId !== null) span.setAttribute('toolgate.approval_request_id', approvalRequestId);
    }
    span.end();
  }

  /**
   * The span of an execution from its `started` record to its outcome (ended()). Undefined when no
   * SDK records it, so a caller keeps nothing for it.
   */
  started(record: Omit<RecordFields, 'status'>, id: number, input: unknown, startTime?: number): Span | undefined {
    const span = this.#tracer.startSpan(`execute_tool ${record.tool_id}`, startTime === undefined ? {} : { startTime });
    if (!span.isRecording()) {
      span.end();
      return undefined;
    }
    span.setAttributes(this.#toolAttributes({ ...record, status: 'started' }, id));
    if (this.#settings.content && input !== undefined) span.setAttribute('gen_ai.tool.call.arguments', json(input));
    return span;
  }

  /** Ends an execution's span with how it ended: a tool that threw is the span's error. */
  ended(span: Span, status: 'success' | 'failure', result: { output?: unknown; error?: string | null }): void {
    span.setAttribute('toolgate.status', status);
    if (status === 'failure') {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', 'tool_error');
    }
    if (this.#settings.content) {
      const text = status === 'success' ? json(result.output) : (result.error ?? '');
      span.setAttribute('gen_ai.tool.call.result', text);
    }
    span.end();
  }

  /**
   * Runs an execution with its span active, so what the tool calls out to (through an HTTP client
   * the host's SDK instruments, say) is the span's child.
   */
  within<T>(span: Span, work: () => T): T {
    return context.with(trace.setSpan(context.active(), span), work);
  }

  /**
   * The span's W3C trace context (`traceparent`, and `tracestate` when it has one), written by the
   * propagator the host registered, for a tool to send where no instrumentation reaches (an MCP
   * server's `_meta`). Undefined when no propagator writes one. Nothing else the propagator would
   * write (the host's baggage) leaves this way.
   */
  traceContext(span: Span): Record<string, string> | undefined {
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), span), carrier, TRACE_CONTEXT_SETTER);
    return carrier.traceparent === undefined ? undefined : carrier;
  }

  #toolAttributes(record: RecordFields, id: number | null): Attributes {
    return {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': record.tool_id,
      'gen_ai.tool.type': 'function',
      ...(id === null ? {} : { 'gen_ai.tool.call.id': String(id) }),
      'toolgate.agent.id': record.agent_id,
      'toolgate.run': record.run,
      'toolgate.decision': DECISIONS[record.status] ?? record.status,
      ...(record.reason ? { 'toolgate.reason': record.reason } : {}),
      ...(record.policy_version === null || record.policy_version === undefined
        ? {}
        : { 'toolgate.policy_version': record.policy_version }),
      ...this.#routingKey(record.routing_key),
    };
  }

  #routingKey(key: string | null): Attributes {
    if (key === null) return {};
    switch (this.#settings.routingKey) {
      case 'plain':
        return { 'toolgate.routing_key': key };
      case 'hashed':
        return { 'toolgate.routing_key.sha256': createHash('sha256').update(key).digest('hex') };
      default:
        return {};
    }
  }
}
