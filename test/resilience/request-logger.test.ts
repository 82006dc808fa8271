// requestLogger(): the log lines of real requests through the toolgate router, captured from pino:
// every line carries the request id, and no line carries a token, a message body or a sender.
import { Writable } from 'node:stream';
import express, { type Express } from 'express';
import pino from 'pino';
import request from 'supertest';
import { errorHandler, notFoundHandler } from '../../middleware/error-handler';
import { requestId } from '../../middleware/request-id';
import { requestLogger } from '../../middleware/request-logger';
import { ADMIN_TOKEN, CLIENT_TOKEN, createTestApp, type TestApp } from '../support/app';
import { makeAgent } from '../support/factories';

const SENDER = 'Mara Quill <mara.quill+billing@thescoop.com>';
const SENDER_KEY = 'mara.quill@thescoop.com';
const BODY_TEXT = 'Please refund my Mint Chip order, it melted on the porch';
const WRONG_TOKEN = 'not-a-known-token-0123456789abcdef';

let t: TestApp;
let app: Express;
let lines: Record<string, unknown>[];
let raw: string[];
let agentId: number;

beforeAll(async () => {
  t = await createTestApp();
  const toolkit = await t
    .admin()
    .post('/api/toolkits')
    .send({ name: 'Support', member_tool_ids: ['check_flavor_stock', 'send_email'] })
    .expect(201);
  agentId = await makeAgent(t, { name: 'Sundae', toolkit_ids: [toolkit.body.id] });

  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) raw.push(line);
      callback();
    },
  });
  // The service's logger settings, written to the sink instead of stdout.
  const logger = pino({ base: { service: 'toolgate' } }, sink);
  app = express();
  app.use(requestId());
  app.use(requestLogger(logger));
  app.use('/api', t.tg.router);
  app.get('/boom', () => {
    throw new Error('a bug in a host route');
  });
  app.use(notFoundHandler());
  app.use(errorHandler({ logger, renderAll: true }));
});

afterAll(() => t.close());

beforeEach(() => {
  raw = [];
  lines = [];
});

/** Waits for the lines of answered requests: pino writes after the response has gone out. */
async function logged(expected: number): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 50 && raw.length < expected; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  lines = raw.map((l) => JSON.parse(l) as Record<string, unknown>);
  return lines;
}

interface Sent {
  res: request.Response;
  method: string;
  path: string;
}

/** Requests of every kind: grants, refusals, bodies, senders in bodies and queries, bad tokens. */
async function sendAll(): Promise<Sent[]> {
  const toolCalls = `/api/agents/${agentId}/tool-calls`;
  const dispatch = (body: object, token = CLIENT_TOKEN) =>
    request(app)
      .post(`${toolCalls}?sender=${encodeURIComponent(SENDER)}`)
      .set('Authorization', `Bearer ${token}`)
      .send(body);
  return [
    {
      method: 'POST',
      path: toolCalls,
      res: await dispatch({ tool: 'send_email', input: { to: SENDER_KEY, subject: 'Your refund', body: BODY_TEXT }, sender: SENDER }),
    },
    { method: 'POST', path: toolCalls, res: await dispatch({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender: SENDER }) },
    {
      method: 'POST',
      path: toolCalls,
      res: await dispatch({ tool: 'send_email', input: { to: SENDER_KEY, subject: 'x', body: BODY_TEXT }, from: SENDER, extra: BODY_TEXT }),
    },
    { method: 'POST', path: toolCalls, res: await dispatch({ tool: 'check_flavor_stock', sender: SENDER }, WRONG_TOKEN) },
    {
      method: 'GET',
      path: `/api/agents/${agentId}/tools`,
      res: await request(app).get(`/api/agents/${agentId}/tools`).query({ sender: SENDER }).set('Authorization', `Bearer ${ADMIN_TOKEN}`),
    },
    {
      method: 'POST',
      path: '/api/toolkits',
      res: await request(app)
        .post('/api/toolkits')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .set('Content-Type', 'application/json')
        .send(`{"name": "${BODY_TEXT}`),
    },
    { method: 'GET', path: '/boom', res: await request(app).get('/boom').set('Authorization', `Bearer ${ADMIN_TOKEN}`) },
  ];
}

describe('when requests of every kind are answered', () => {
  test('then each request leaves exactly one request line, with its id, method, path, status, duration and role', async () => {
    const sent = await sendAll();
    const requestLines = (await logged(sent.length + 1)).filter((l) => l.msg === 'request');
    expect(requestLines).toHaveLength(sent.length);
    sent.forEach(({ res, method, path }, i) => {
      expect(requestLines[i]).toEqual(
        expect.objectContaining({
          request_id: res.headers['x-request-id'],
          method,
          path,
          status: res.status,
          duration_ms: expect.any(Number),
        }),
      );
    });
    // The broken JSON body is left out: whether it is refused before authentication is the router's order.
    // /boom is outside the router, so no role was ever established.
    const roles = requestLines.map((l) => l.role);
    expect([...roles.slice(0, 5), roles[6]]).toEqual(['client', 'client', 'client', null, 'admin', null]);
    expect(requestLines.map((l) => l.status)).toEqual([200, 403, 422, 401, 200, 400, 500]);
  });

  test('then every log line, the error handler’s too, carries the request id', async () => {
    const sent = await sendAll();
    const all = await logged(sent.length + 1);
    const ids = new Set(sent.map(({ res }) => res.headers['x-request-id']));
    expect(all.some((l) => l.msg === 'request failed')).toBe(true);
    for (const line of all) expect(ids.has(line.request_id as string)).toBe(true);
  });

  test('then no line holds a token, a message body, a sender address or a query string', async () => {
    const sent = await sendAll();
    await logged(sent.length + 1);
    const text = raw.join('\n').toLowerCase();
    for (const secret of [
      CLIENT_TOKEN,
      ADMIN_TOKEN,
      WRONG_TOKEN,
      BODY_TEXT,
      SENDER,
      SENDER_KEY,
      'mara.quill',
      'thescoop.com',
      'sender=',
      'Bearer',
    ]) {
      expect({ secret, found: text.includes(secret.toLowerCase()) }).toEqual({ secret, found: false });
    }
  });
});

describe('when a request arrives with its own X-Request-Id', () => {
  test('then its line carries that id', async () => {
    await request(app)
      .get(`/api/agents/${agentId}/tools`)
      .set('X-Request-Id', 'upstream-1234')
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .expect(200);
    const [line] = await logged(1);
    expect(line).toMatchObject({
      msg: 'request',
      request_id: 'upstream-1234',
      path: `/api/agents/${agentId}/tools`,
      status: 200,
      role: 'admin',
    });
  });
});
