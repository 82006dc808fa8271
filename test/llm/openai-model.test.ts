// The OpenAI-compatible model through the official client, over real HTTP to a local server that
// speaks the Chat Completions protocol: structured output in, every failure out as a ModelError.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ModelError, orUpstreamError, type ModelContext } from '../../src/llm/language-model';
import { OpenAIModel, type OpenAIModelOptions } from '../../src/llm/openai-model';
import type { EmailAnalysis, ModelEmail } from '../../src/llm/email-analysis';
import { apiError, completion, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';

const KEY = 'sk-test-0123456789abcdef';
const ctx: ModelContext = {
  agentName: 'Sundae',
  systemPrompt: 'Sign every reply as Sundae from The Scoop.',
  now: new Date('2025-03-05T10:00:00Z'),
};
const email: ModelEmail = {
  from: 'Jane Cooper <jane.cooper@acme.com>',
  subject: 'Refund for order SCP-1042',
  body: 'My order SCP-1042 arrived melted. Please refund it by Friday.',
  received_at: new Date('2025-03-05T10:14:00Z'),
};
const wireAnalysis = {
  summary: 'Order SCP-1042 arrived melted; Jane wants a refund by Friday.',
  category: 'billing',
  priority: 'high',
  sentiment: 'negative',
  action_items: [
    { title: 'Refund order SCP-1042', due: '2025-03-07' },
    { title: 'Apologise to Jane', due: null },
  ],
  suggested_reply: 'Hi Jane,\n\nI am sorry about the melted pint; the refund is on its way.\n\nSundae',
};
const analysis: EmailAnalysis = {
  ...wireAnalysis,
  category: 'billing',
  priority: 'high',
  sentiment: 'negative',
  action_items: [{ title: 'Refund order SCP-1042', due: '2025-03-07' }, { title: 'Apologise to Jane' }],
};

let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(() => fake.close());

function model(options: Partial<OpenAIModelOptions> = {}): OpenAIModel {
  return new OpenAIModel({ apiKey: KEY, baseURL: fake.baseURL, model: 'gpt-test-mini', ...options });
}

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ModelError);
    return err as ModelError;
  }
  throw new Error('expected the call to fail');
}

type Body = {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: {
    type: string;
    json_schema: { name: string; strict: boolean; schema: { properties: Record<string, { enum?: string[] }>; required: string[] } };
  };
};
const bodyOf = (i: number) => fake.requests[i].body as Body;

describe('analyzeEmail', () => {
  test('when the server returns valid structured output, then the analysis is parsed, with a null due left out', async () => {
    fake.script(() => completion(JSON.stringify(wireAnalysis)));
    await expect(model().analyzeEmail(email, ctx)).resolves.toEqual(analysis);
  });

  test('when the model is called, then the request carries the model name and the bearer key', async () => {
    fake.script(() => completion(JSON.stringify(wireAnalysis)));
    await model().analyzeEmail(email, ctx);
    expect(fake.requests).toHaveLength(1);
    expect(bodyOf(0).model).toBe('gpt-test-mini');
    expect(fake.requests[0].headers.authorization).toBe(`Bearer ${KEY}`);
  });

  test('when an analysis is asked for, then the request carries a strict json_schema response format built from the schema', async () => {
    fake.script(() => completion(JSON.stringify(wireAnalysis)));
    await model().analyzeEmail(email, ctx);
    const format = bodyOf(0).response_format;
    expect(format).toMatchObject({ type: 'json_schema', json_schema: { name: 'email_analysis', strict: true } });
    expect(format?.json_schema.schema.required.sort()).toEqual([
      'action_items',
      'category',
      'priority',
      'sentiment',
      'suggested_reply',
      'summary',
    ]);
    expect(format?.json_schema.schema.properties.priority.enum).toEqual(['low', 'medium', 'high', 'urgent']);
  });

  test("when an analysis is asked for, then the messages carry the agent's system prompt, the email and its reference date", async () => {
    fake.script(() => completion(JSON.stringify(wireAnalysis)));
    await model().analyzeEmail(email, ctx);
    const [system, user] = bodyOf(0).messages;
    expect(system.role).toBe('system');
    expect(system.content).toContain('Sign every reply as Sundae from The Scoop.');
    expect(user.content).toContain('Please refund it by Friday.');
    expect(user.content).toContain('Reference date: 2025-03-05');
  });

  test('when the content is not JSON, then it fails as invalid_output', async () => {
    fake.script(() => completion('Sure! Here is the analysis: billing, high priority.'));
    expect((await failure(model().analyzeEmail(email, ctx))).kind).toBe('invalid_output');
  });

  test('when the JSON breaks the schema, then it fails as invalid_output', async () => {
    fake.script(() => completion(JSON.stringify({ ...wireAnalysis, priority: 'critical' })));
    expect((await failure(model().analyzeEmail(email, ctx))).kind).toBe('invalid_output');
  });

  test('when a due date is not a calendar date, then it fails as invalid_output', async () => {
    fake.script(() => completion(JSON.stringify({ ...wireAnalysis, action_items: [{ title: 'Refund', due: 'next Friday' }] })));
    expect((await failure(model().analyzeEmail(email, ctx))).kind).toBe('invalid_output');
  });

  test('when the model refuses, then it fails as invalid_output', async () => {
    fake.script(() => completion(null, { refusal: 'I cannot help with that.' }));
    expect((await failure(model().analyzeEmail(email, ctx))).kind).toBe('invalid_output');
  });

  test('when the answer is cut off at the token limit, then it fails as invalid_output', async () => {
    fake.script(() => completion('{"summary": "Order SCP-1042 arr', { finish_reason: 'length' }));
    expect((await failure(model().analyzeEmail(email, ctx))).kind).toBe('invalid_output');
  });

  test('when the body is not a chat completion, then it fails as invalid_output', async () => {
    fake.script(() => ({ status: 200, text: '<html>gateway</html>' }));
    expect((await failure(model().analyzeEmail(email, ctx))).kind).toBe('invalid_output');
  });
});

describe('upstream failures', () => {
  test('when the upstream answers 500 every time, then it fails as upstream after one retry (two requests)', async () => {
    fake.script(() => apiError(500, 'The server had an error', null, { 'retry-after-ms': '5' }));
    const err = await failure(model({ maxRetries: 1 }).analyzeEmail(email, ctx));
    expect(err.kind).toBe('upstream');
    expect(fake.requests).toHaveLength(2);
  });

  test('when maxRetries is 2, then a failing upstream is asked three times', async () => {
    fake.script(() => apiError(503, 'Overloaded', null, { 'retry-after-ms': '5' }));
    await failure(model({ maxRetries: 2 }).chat('Hello', ctx));
    expect(fake.requests).toHaveLength(3);
  });

  test('when the first answer is a 500 and the retry succeeds, then the analysis is returned', async () => {
    fake.script((_req, i) => (i === 0 ? apiError(500, 'The server had an error') : completion(JSON.stringify(wireAnalysis))));
    await expect(model().analyzeEmail(email, ctx)).resolves.toEqual(analysis);
    expect(fake.requests).toHaveLength(2);
  });

  test('when the key is refused (401), then it fails as upstream at once, without retrying', async () => {
    fake.script(() => apiError(401, `Incorrect API key provided: ${KEY}.`, 'invalid_api_key'));
    const err = await failure(model().analyzeEmail(email, ctx));
    expect(err.kind).toBe('upstream');
    expect(fake.requests).toHaveLength(1);
  });

  test("when the provider's error text echoes the key, then the ModelError's message does not carry it", async () => {
    fake.script(() => apiError(401, `Incorrect API key provided: ${KEY}.`, 'invalid_api_key'));
    const err = await failure(model().analyzeEmail(email, ctx));
    expect(err.message).toContain('401');
    expect(err.message).not.toContain(KEY);
  });

  test('when the server asks to retry after longer than the time left, then it fails as upstream without waiting', async () => {
    fake.script(() => apiError(429, 'Rate limit reached', 'rate_limit_exceeded', { 'retry-after': '3600' }));
    const err = await failure(model({ timeoutMs: 5_000 }).analyzeEmail(email, ctx));
    expect(err.kind).toBe('upstream');
    expect(fake.requests).toHaveLength(1);
  }, 3_000);

  test('when the server never answers, then it fails as timeout instead of hanging', async () => {
    fake.script(() => 'hang');
    const err = await failure(model({ timeoutMs: 300 }).analyzeEmail(email, ctx));
    expect(err.kind).toBe('timeout');
  }, 3_000);

  test('when the server sends headers and then stalls mid-body, then it fails as timeout instead of hanging', async () => {
    fake.script(() => 'stall');
    const err = await failure(model({ timeoutMs: 300 }).analyzeEmail(email, ctx));
    expect(err.kind).toBe('timeout');
  }, 3_000);

  test('when nothing listens at the base URL, then it fails as upstream', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const err = await failure(model({ baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 }).chat('Hello', ctx));
    expect(err.kind).toBe('upstream');
  });

  test('when a model call fails, then orUpstreamError gives the 502 upstream_error the routes answer with', async () => {
    const http = await orUpstreamError(Promise.reject(new ModelError('timeout', 'The model did not answer within 300 ms.'))).catch(
      (err: unknown) => err,
    );
    expect(http).toMatchObject({ status: 502, code: 'upstream_error' });
    expect((http as Error).message).toContain('timeout');
  });
});

describe('text answers', () => {
  test('when a reply is asked for, then the completion text is returned trimmed', async () => {
    fake.script(() => completion('  Hi Jane,\n\nYour refund is on its way.\n\nSundae  '));
    await expect(model().writeReply(email, analysis, ctx)).resolves.toBe('Hi Jane,\n\nYour refund is on its way.\n\nSundae');
  });

  test('when a reply is asked for, then no response format is imposed and the analysis is sent along', async () => {
    fake.script(() => completion('Hi Jane'));
    await model().writeReply(email, analysis, ctx);
    expect(bodyOf(0).response_format).toBeUndefined();
    expect(bodyOf(0).messages[1].content).toContain('Refund order SCP-1042');
  });

  const refundSources = [
    { title: 'Shipping', text: 'Orders ship in dry ice.' },
    { title: 'Refund policy', text: 'Melted orders are refunded in full.' },
  ];
  const grounded = (answer: unknown) => completion(JSON.stringify(answer));

  test('when a question is asked, then the numbered sources are in the prompt and a grounded answer is asked for', async () => {
    fake.script(() => grounded({ answered: true, answer: 'Yes, in full.', sources: [2] }));
    await model().answerQuestion('Are melted orders refunded?', refundSources, ctx);
    expect(bodyOf(0).messages[1].content).toContain('[2] Refund policy');
    expect(bodyOf(0).messages[0].content).toMatch(/only from the numbered sources/);
    expect(bodyOf(0).response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'grounded_answer', strict: true } });
  });

  test('when the model answers from some sources, then the answer names those sources (as indexes) and no other', async () => {
    fake.script(() => grounded({ answered: true, answer: '  Yes, in full.  ', sources: [2, 2, 9] }));
    await expect(model().answerQuestion('Are melted orders refunded?', refundSources, ctx)).resolves.toEqual({
      answered: true,
      text: 'Yes, in full.',
      cited: [1],
    });
  });

  test('when the model says the sources do not hold the answer, then it is no answer', async () => {
    fake.script(() => grounded({ answered: false, answer: '', sources: [] }));
    await expect(model().answerQuestion('Do you sell pizza?', refundSources, ctx)).resolves.toEqual({
      answered: false,
      text: '',
      cited: [],
    });
  });

  test('when the model answers but cites no source it was given, then it is no answer', async () => {
    fake.script(() => grounded({ answered: true, answer: 'We sell pizza on Fridays.', sources: [7] }));
    await expect(model().answerQuestion('Do you sell pizza?', refundSources, ctx)).resolves.toMatchObject({ answered: false });
  });

  test('when the grounded answer is not JSON, then it fails as invalid_output', async () => {
    fake.script(() => completion('Yes, in full.'));
    expect((await failure(model().answerQuestion('Are melted orders refunded?', refundSources, ctx))).kind).toBe('invalid_output');
  });

  test('when a chat answer is empty, then it fails as invalid_output', async () => {
    fake.script(() => completion('   '));
    expect((await failure(model().chat('Hello', ctx))).kind).toBe('invalid_output');
  });
});
