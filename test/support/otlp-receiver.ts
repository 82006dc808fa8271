// A stand-in for an OpenTelemetry collector: a plain HTTP server taking OTLP/HTTP in its JSON
// encoding (POST /v1/traces), keeping every span it is sent, its attributes read into plain values.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values: AnyValue[] };
};

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  attributes: Record<string, unknown>;
  status: { code?: number };
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: ReceivedSpan[];
  /** The Content-Type of every request it was sent. */
  contentTypes: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.push(req.headers['content-type'] ?? '');
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !(req.headers['content-type'] ?? '').startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          scopeSpans: { spans: (Omit<ReceivedSpan, 'attributes'> & { attributes?: { key: string; value: AnyValue }[] })[] }[];
        }[];
      };
      for (const rs of body.resourceSpans)
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              name: s.name,
              status: s.status ?? {},
              attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, plain(a.value)])),
            });
          }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function plain(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return value.arrayValue.values.map(plain);
  return undefined;
}
