// A local HTTP server that speaks the OpenAI embeddings protocol (POST /v1/embeddings), so the
// official client is tested over real HTTP. Its vectors are deterministic and carry meaning of a
// toy kind: each word is reduced to a concept (synonyms share one: "money" and "refunds" are both
// REFUND), each concept has a fixed pseudo-random direction, and a text is the sum of its concepts'
// directions. So a question can be near a passage that shares no word with it. Give it a few hundred
// dimensions where several passages compete: with few, unrelated concepts' directions line up by chance.
//
//   const fake = await startFakeEmbeddings();
//   const embeddings = new OpenAIEmbeddings({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'fake-embed', dimensions: 64 });
//   fake.down = true;           // every request answers 503 until set back
//   fake.inputs                 // every text received, in order
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Words of one meaning. A word not listed is a concept of its own. */
const CONCEPTS: Record<string, string[]> = {
  REFUND: ['refund', 'refunds', 'refunded', 'money', 'reimburse', 'reimbursed', 'repay', 'repaid'],
  SHIPPING: ['shipping', 'ship', 'shipped', 'delivery', 'deliver', 'delivered', 'courier', 'parcel', 'arrive', 'arrives'],
  MELT: ['melt', 'melted', 'melting', 'warm', 'thawed', 'soft', 'liquid'],
  HOURS: ['hours', 'open', 'opening', 'closing', 'close', 'closes'],
  ALLERGY: ['allergy', 'allergies', 'allergen', 'allergens', 'nuts', 'nut', 'peanut', 'gluten'],
};
const STOP = new Set(
  'a an and are as at be by can do for from get how i in is it my of on or the to we what when will with you your'.split(' '),
);
const CONCEPT_OF = new Map(Object.entries(CONCEPTS).flatMap(([concept, words]) => words.map((w) => [w, concept] as const)));

export const FAKE_DEFAULT_DIMENSIONS = 32;

/** The concepts a text holds, each once per occurrence. */
export function conceptsOf(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => !STOP.has(w)).map((w) => CONCEPT_OF.get(w) ?? w);
}

/** The toy embedding of a text: the sum of its concepts' directions (not normalised: the client's job). */
export function fakeVector(text: string, dimensions: number): number[] {
  const vector: number[] = Array.from({ length: dimensions }, () => 0);
  for (const concept of conceptsOf(text)) {
    // One bit of a hash of the concept per dimension, as +1 or -1: near-orthogonal directions.
    for (let block = 0; block * 256 < dimensions; block++) {
      const bits = createHash('sha256').update(`${concept}:${block}`).digest();
      for (let i = block * 256; i < Math.min(dimensions, (block + 1) * 256); i++) {
        const bit = (bits[(i % 256) >> 3]! >> (i & 7)) & 1;
        vector[i]! += bit ? 1 : -1;
      }
    }
  }
  // A text with no concept still gets a vector (the API never answers an empty one).
  if (!vector.some((x) => x !== 0)) vector[0] = 1;
  return vector;
}

export interface FakeEmbeddings {
  baseURL: string;
  /** Every text received, in the order received. */
  inputs: string[];
  /** The body of every request. */
  requests: { model: string; input: string[]; dimensions?: number }[];
  /** While true, every request is answered 503. */
  down: boolean;
  /** While set, every request waits this long before answering. */
  delayMs: number;
  /** While true, requests are never answered (the client's deadline must end them). */
  hang: boolean;
  /** The vectors' length when a request does not ask for one. */
  nativeDimensions: number;
  close(): Promise<void>;
}

export async function startFakeEmbeddings(): Promise<FakeEmbeddings> {
  const sockets = new Set<Socket>();
  const fake: Omit<FakeEmbeddings, 'baseURL' | 'close'> = {
    inputs: [],
    requests: [],
    down: false,
    delayMs: 0,
    hang: false,
    nativeDimensions: FAKE_DEFAULT_DIMENSIONS,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') return answer(404, { error: { message: `No route ${req.url}` } });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; input: string | string[]; dimensions?: number };
      const input = Array.isArray(body.input) ? body.input : [body.input];
      fake.requests.push({ model: body.model, input, ...(body.dimensions ? { dimensions: body.dimensions } : {}) });
      fake.inputs.push(...input);
      if (fake.hang) return;
      if (fake.down) return answer(503, { error: { message: 'The server is overloaded.', type: 'server_error', code: null } });
      const dimensions = body.dimensions ?? fake.nativeDimensions;
      const reply = () =>
        answer(200, {
          object: 'list',
          model: body.model,
          data: input.map((text, index) => ({ object: 'embedding', index, embedding: fakeVector(text, dimensions) })),
          usage: { prompt_tokens: input.length, total_tokens: input.length },
        });
      if (fake.delayMs > 0) setTimeout(reply, fake.delayMs);
      else reply();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    baseURL: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  });
}
