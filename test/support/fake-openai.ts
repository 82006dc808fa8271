// A local HTTP server that speaks the Chat Completions protocol (POST /v1/chat/completions), so the
// official `openai` client is tested over real HTTP. Each test scripts its answers and reads back
// the requests it received:
//
//   const fake = await startFakeOpenAI();
//   fake.script(() => completion(JSON.stringify(analysis)));
//   const model = new OpenAIModel({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'gpt-test' });
//   ...
//   await fake.close();
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** An answer: a JSON body (`json`) or a raw one (`text`), with a status and headers. */
export interface FakeAnswer {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  text?: string;
}
/**
 * What the server does with one request: answer it, now or once a promise settles; never answer at
 * all ('hang'); or send the headers and the start of a body, then nothing more ('stall').
 */
export type FakeReply = FakeAnswer | Promise<FakeAnswer> | 'hang' | 'stall';
export type FakeScript = (request: RecordedRequest, index: number) => FakeReply;

export interface FakeOpenAI {
  /** The API root to give the client, e.g. http://127.0.0.1:41234/v1. */
  baseURL: string;
  /** Every chat-completions request received, in order. */
  requests: RecordedRequest[];
  script(next: FakeScript): void;
  close(): Promise<void>;
}

/** A chat.completion object whose one choice's message content is `content`. */
export function completion(content: string | null, overrides: { finish_reason?: string; refusal?: string | null } = {}): FakeAnswer {
  return {
    status: 200,
    json: {
      id: 'chatcmpl-fake-1',
      object: 'chat.completion',
      created: 1_741_000_000,
      model: 'gpt-test',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, refusal: overrides.refusal ?? null },
          logprobs: null,
          finish_reason: overrides.finish_reason ?? 'stop',
        },
      ],
      usage: { prompt_tokens: 120, completion_tokens: 80, total_tokens: 200 },
    },
  };
}

/** A chat.completion whose one choice calls tools: `[name, arguments]` pairs, in order. */
export function toolCalls(calls: [name: string, args: string][]): FakeAnswer {
  return {
    status: 200,
    json: {
      id: 'chatcmpl-fake-tools',
      object: 'chat.completion',
      created: 1_741_000_000,
      model: 'gpt-test',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: calls.map(([name, args], i) => ({
              id: `call_${i}_${name}`,
              type: 'function',
              function: { name, arguments: args },
            })),
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 120, completion_tokens: 20, total_tokens: 140 },
    },
  };
}

/** An error response in the API's shape. */
export function apiError(status: number, message: string, code: string | null = null, headers: Record<string, string> = {}): FakeAnswer {
  return {
    status,
    headers,
    json: { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code } },
  };
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let current: FakeScript = () => apiError(500, 'no script set for this test');

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // kept as text: the test can assert on it
      }
      const path = req.url ?? '';
      if (req.method !== 'POST' || path !== '/v1/chat/completions') {
        send(res, apiError(404, `No route ${req.method} ${path}`));
        return;
      }
      const recorded = { method: req.method, path, headers: req.headers, body };
      requests.push(recorded);
      const reply = current(recorded, requests.length - 1);
      if (reply === 'stall') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"id": "chatcmpl-fake-1", "object": "chat.completion", "choi');
      } else if (reply instanceof Promise) {
        void reply.then((answer) => send(res, answer));
      } else if (reply !== 'hang') {
        send(res, reply);
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (next) => {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        // Hanging requests hold their sockets open: end them so close() returns.
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, reply: FakeAnswer): void {
  const payload = reply.text ?? JSON.stringify(reply.json ?? {});
  res.writeHead(reply.status ?? 200, {
    'content-type': reply.text !== undefined ? 'text/plain' : 'application/json',
    'x-request-id': 'req_fake',
    ...reply.headers,
  });
  res.end(payload);
}
