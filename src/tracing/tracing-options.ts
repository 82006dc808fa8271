// The tracing option (SEMANTICS §16): what toolgate's spans may carry of a run's sender and of its
// text. Both private by default: no routing key, no message, argument or result. Checked in one
// place, for createToolgate({ tracing }) and the service's TOOLGATE_TRACE_* variables.
import { ToolgateConfigError } from '../errors';

/** How a span names the run's sender: not at all, by its SHA-256, or as it is. */
export const TRACE_ROUTING_KEYS = ['none', 'hashed', 'plain'] as const;
export type TraceRoutingKey = (typeof TRACE_ROUTING_KEYS)[number];

export interface TracingOptions {
  /** `none` (the default), `hashed` (`toolgate.routing_key.sha256`) or `plain` (`toolgate.routing_key`). */
  routingKey?: TraceRoutingKey;
  /** Whether spans carry the message's text, the reply, and tools' arguments and results. Default false. */
  content?: boolean;
}

export type TracingSettings = Required<TracingOptions>;

export const TRACING_DEFAULTS: TracingSettings = { routingKey: 'none', content: false };

/** The settings, or false: `tracing: false` makes no span at all, not even the API's no-op ones. */
export function checkTracingOptions(given: unknown): TracingSettings | false {
  if (given === undefined) return TRACING_DEFAULTS;
  if (given === false) return false;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw tracingError(
      `createToolgate({ tracing: ${JSON.stringify(given)} }) takes an object such as { routingKey: 'hashed', content: false }, or false for no spans at all.`,
    );
  }
  const { routingKey, content, ...rest } = given as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) {
    throw tracingError(`createToolgate({ tracing: { ${unknown} } }) names no setting: the settings are routingKey and content.`);
  }
  if (routingKey !== undefined && !(TRACE_ROUTING_KEYS as readonly unknown[]).includes(routingKey)) {
    throw tracingError(
      `createToolgate({ tracing: { routingKey: ${JSON.stringify(routingKey)} } }): say 'none' (the default), 'hashed' or 'plain'.`,
    );
  }
  if (content !== undefined && typeof content !== 'boolean') {
    throw tracingError(`createToolgate({ tracing: { content: ${JSON.stringify(content)} } }): say true or false (the default).`);
  }
  return { routingKey: (routingKey as TraceRoutingKey | undefined) ?? 'none', content: content ?? false };
}

function tracingError(message: string): ToolgateConfigError {
  return new ToolgateConfigError('ERR_TOOLGATE_TRACING', message);
}
