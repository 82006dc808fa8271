// The service's own tracer provider (SEMANTICS §16): the SDK for Node with the OTLP/HTTP exporter
// (JSON), set up only when the standard OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT says where spans go; the exporter reads the rest of the
// standard variables (headers, timeout) itself. Without either, nothing is set up, and
// toolgate's spans stay the API's no-op ones. A host that mounts toolgate brings its own SDK instead.
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

export interface ServiceTracing {
  /** Where spans are exported: the endpoint's origin, never its path, query or credentials (for the log). */
  endpoint: string;
  /** Exports what is still buffered, then stops: on SIGTERM, after the requests in flight have ended. */
  shutdown(): Promise<void>;
}

export function startServiceTracing(env: NodeJS.ProcessEnv = process.env): ServiceTracing | null {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const endpoint = traces || base;
  if (!endpoint) return null;
  // The URL from `env` as the specification builds it (the signal's endpoint as it is; the base one
  // with /v1/traces), so that the environment given is the one used.
  const url = traces || `${withoutTrailingSlashes(base!)}/v1/traces`;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME?.trim() || 'toolgate' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  provider.register();
  return { endpoint: originOf(endpoint), shutdown: () => provider.shutdown() };
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'an endpoint that is not a URL';
  }
}

/** The text without the slashes it ends with, found from the end (a pattern anchored at the end would rescan every run of slashes). */
function withoutTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === '/') end--;
  return text.slice(0, end);
}
