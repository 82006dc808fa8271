// The email routes over HTTP: what a client gets back, what bad input gets (HTTP.md error shapes,
// never a 500), and what a failing language model does to each stage, through the real OpenAI
// client against a local server that speaks its protocol.
import { OpenAIModel } from '../../src/llm/openai-model';
import { apiError, completion, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent } from '../support/factories';

let t: TestApp;
let agent: number;

const MESSAGE = {
  from: 'Jane Doe <jane@acme.com>',
  subject: 'Melted order',
  body: 'My order arrived melted and I am really disappointed. Please refund it by Friday.',
};

beforeAll(async () => {
  t = await createTestApp({ bodyLimit: '64kb' });
  agent = await makeAgent(t, { name: 'Sundae', enabled_tools: 'email_analyzer,task_creator,reply_generator' });
});
afterAll(() => t.close());

describe('when a client posts a message for analysis', () => {
  test('then the analysis has the HTTP.md shape and the enum values', async () => {
    const res = await t.client().post(`/api/agents/${agent}/email/analyze`).send(MESSAGE).expect(200);
    expect(res.body).toMatchObject({ routing_key: 'jane@acme.com', tools: { email_analyzer: 'used', task_creator: 'used' } });
    expect(Object.keys(res.body.analysis).sort()).toEqual([
      'action_items',
      'category',
      'priority',
      'sentiment',
      'suggested_reply',
      'summary',
    ]);
    expect(['low', 'medium', 'high', 'urgent']).toContain(res.body.analysis.priority);
    expect(res.body.analysis.sentiment).toBe('negative');
  });
});

describe('when the workflow writes a reply', () => {
  test("then the reply agent signs with the agent's own name", async () => {
    const res = await t.client().post(`/api/agents/${agent}/workflows/email`).send(MESSAGE).expect(200);
    expect(res.body.reply.source).toBe('reply_agent');
    expect(res.body.reply.text.trim().endsWith('Sundae')).toBe(true);
  });
});

describe('when the message is malformed', () => {
  test.each([
    ['a missing from', { body: 'hi' }, ['body', 'from']],
    ['a missing body', { from: 'a@b.com' }, ['body', 'body']],
    ['an empty body', { from: 'a@b.com', body: '   ' }, ['body', 'body']],
    ['a number for from', { from: 42, body: 'hi' }, ['body', 'from']],
    ['an array for body', { from: 'a@b.com', body: ['hi'] }, ['body', 'body']],
    ['a NUL byte in the subject', { from: 'a@b.com', body: 'hi', subject: 'a\u0000b' }, ['body', 'subject']],
    [
      'authentication_results that is not a list',
      { from: 'a@b.com', body: 'hi', authentication_results: 'mx; dmarc=pass' },
      ['body', 'authentication_results'],
    ],
  ])('then %s is a 422 naming the field', async (_what, body, loc) => {
    for (const route of ['email/analyze', 'workflows/email']) {
      const res = await t.client().post(`/api/agents/${agent}/${route}`).send(body).expect(422);
      expect(res.body.code).toBe('validation_error');
      expect(res.body.detail.map((d: { loc: unknown[] }) => d.loc)).toContainEqual(loc);
    }
  });

  test('then a body over the limit is a 413', async () => {
    const res = await t
      .client()
      .post(`/api/agents/${agent}/email/analyze`)
      .send({ ...MESSAGE, body: 'x'.repeat(70_000) })
      .expect(413);
    expect(res.body.code).toBe('payload_too_large');
  });

  test('then an unknown agent is a 404', async () => {
    const res = await t.client().post('/api/agents/987654/email/analyze').send(MESSAGE).expect(404);
    expect(res.body.code).toBe('not_found');
  });

  test('then chat without a message is a 422 and for an unknown agent a 404', async () => {
    await t.client().post(`/api/agents/${agent}/chat`).send({}).expect(422);
    await t.client().post('/api/agents/987654/chat').send({ message: 'hi' }).expect(404);
  });
});

describe('when the language model fails', () => {
  let fake: FakeOpenAI;
  let flaky: TestApp;
  let flakyAgent: number;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    flaky = await createTestApp({
      model: new OpenAIModel({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'gpt-test', timeoutMs: 2000, maxRetries: 0 }),
    });
    flakyAgent = await makeAgent(flaky, { name: 'Flaky', enabled_tools: 'email_analyzer,reply_generator' });
  });
  afterAll(async () => {
    await flaky.close();
    await fake.close();
  });

  const analysis = {
    summary: 'Melted order.',
    category: 'complaint',
    priority: 'high',
    sentiment: 'negative',
    action_items: [],
    suggested_reply: 'Sorry, we will refund you.',
  };

  test('then the analysis stage is a 502 upstream_error, recorded as a failure', async () => {
    fake.script(() => apiError(500, 'upstream exploded'));
    const res = await flaky.client().post(`/api/agents/${flakyAgent}/email/analyze`).send(MESSAGE).expect(502);
    expect(res.body.code).toBe('upstream_error');
    const calls = await flaky.admin().get(`/api/agents/${flakyAgent}/tool-calls?limit=1`).expect(200);
    expect(calls.body[0]).toMatchObject({ tool_id: 'email_analyzer', status: 'failure' });
  });

  test('then a failing reply agent fails its stage and the suggested reply stands in', async () => {
    fake.script((_req, i) => (i % 2 === 0 ? completion(JSON.stringify(analysis)) : apiError(503, 'overloaded')));
    fake.requests.length = 0;
    const res = await flaky.client().post(`/api/agents/${flakyAgent}/workflows/email`).send(MESSAGE).expect(200);
    expect(res.body.stages.map((s: { status: string }) => s.status)).toEqual(['completed', 'skipped', 'failed']);
    expect(res.body.reply).toEqual({ text: 'Sorry, we will refund you.', source: 'analysis_fallback' });
    const calls = await flaky.admin().get(`/api/agents/${flakyAgent}/tool-calls?limit=1`).expect(200);
    expect(calls.body[0]).toMatchObject({ tool_id: 'reply_generator', tool_name: 'multi_agent_reply_agent', status: 'failure' });
  });

  test('then a model that never answers is a 502 after the timeout, not a hang', async () => {
    fake.script(() => 'hang');
    const res = await flaky.client().post(`/api/agents/${flakyAgent}/email/analyze`).send(MESSAGE).expect(502);
    expect(res.body.code).toBe('upstream_error');
  });

  test('then chat with a failing model is a 502', async () => {
    fake.script(() => apiError(500, 'nope'));
    await flaky.client().post(`/api/agents/${flakyAgent}/chat`).send({ message: 'hi' }).expect(502);
  });
});
