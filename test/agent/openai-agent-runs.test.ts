// Agent runs through the real `openai` client against a local server that speaks Chat Completions
// with tool calls: the tools it receives are exactly the run's; a tool not offered is refused at
// dispatch, recorded, given back, and the run goes on; a model that never stops is stopped at the
// bound; malformed arguments are a failed step; a failing model ends the run as model_error.
import { QueryTypes } from 'sequelize';
import { z } from 'zod';
import { SCOOP_TOOLS } from '../../src/app/demo/scoop-tools';
import { OpenAIModel } from '../../src/llm/openai-model';
import { createTestApp, type TestApp } from '../support/app';
import { apiError, completion, startFakeOpenAI, toolCalls, type FakeOpenAI, type RecordedRequest } from '../support/fake-openai';
import { makeAgent, makeToolkit } from '../support/factories';

const MAX_STEPS = 4;

let fake: FakeOpenAI;
let t: TestApp;
let sundae: number;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  t = await createTestApp({
    model: new OpenAIModel({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'gpt-test', timeoutMs: 5_000, maxRetries: 0 }),
    agentRuns: { maxSteps: MAX_STEPS, maxToolCalls: 10 },
  });
  const support = await makeToolkit(t, 'Support', ['lookup_order', 'check_flavor_stock']);
  const finance = await makeToolkit(t, 'Finance', ['process_refund']);
  sundae = await makeAgent(t, { name: 'Sundae', toolkit_ids: [support] });
  await t
    .admin()
    .post(`/api/agents/${sundae}/toolkits`)
    .send({ toolkit_id: finance, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] })
    .expect(201);
});

afterAll(async () => {
  await t.close();
  await fake.close();
});

beforeEach(() => {
  fake.requests.length = 0;
});

const fromJane = { from: 'jane@acme.com', subject: 'Melted order', body: 'Order SCP-1042 arrived melted.' };
const send = (message: Record<string, unknown>, threadId?: number) =>
  t
    .client()
    .post(`/api/agents/${sundae}/messages`)
    .send({ ...(threadId ? { thread_id: threadId } : {}), message });

interface SentBody {
  tools?: { type: string; function: { name: string; description: string; parameters: Record<string, unknown> } }[];
  messages: {
    role: string;
    content?: string | null;
    tool_call_id?: string;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  }[];
}
const sent = (r: RecordedRequest | undefined) => r?.body as SentBody;

describe("when the model is offered a run's tools", () => {
  test("then the tools the server receives are exactly the run's, each with its summary and the JSON Schema of its zod input", async () => {
    fake.script(() => completion('Hi Jane, let me look into it. — Sundae'));
    const res = await send(fromJane).expect(200);
    expect(res.body).toMatchObject({
      tools_offered: ['check_flavor_stock', 'lookup_order'],
      steps: [],
      stopped: 'reply',
      reply: { text: 'Hi Jane, let me look into it. — Sundae' },
    });
    const tools = sent(fake.requests[0]).tools ?? [];
    expect(tools.map((tool) => tool.function.name)).toEqual(['check_flavor_stock', 'lookup_order']);
    for (const tool of tools) {
      const registered = SCOOP_TOOLS.find((h) => h.id === tool.function.name)!;
      const { $schema: _dialect, ...schema } = z.toJSONSchema(registered.input, { io: 'input' }) as Record<string, unknown>;
      expect(tool).toEqual({
        type: 'function',
        function: { name: registered.id, description: `${registered.display_name}: ${registered.summary}`, parameters: schema },
      });
    }
  });

  test('then a sender the gate admits gets the gated tool in the list too', async () => {
    fake.script(() => completion('Noted. — Sundae'));
    await send({ from: 'mara@thescoop.com', body: 'Status of SCP-1042?' }).expect(200);
    expect((sent(fake.requests[0]).tools ?? []).map((tool) => tool.function.name)).toEqual([
      'check_flavor_stock',
      'lookup_order',
      'process_refund',
    ]);
  });
});

describe('when the model calls a tool the run was not offered', () => {
  test("then the call is refused at dispatch, recorded denied, given back as that call's result, and the run goes on", async () => {
    fake.script((_req, i) =>
      i === 0 ? toolCalls([['process_refund', '{"order_id":"SCP-1042"}']]) : completion('I cannot refund this myself. — Sundae'),
    );
    const res = await send(fromJane).expect(200);
    expect(res.body.steps).toEqual([
      { tool: 'process_refund', input: { order_id: 'SCP-1042' }, status: 'denied', error: expect.stringMatching(/refused at dispatch/) },
    ]);
    expect(res.body).toMatchObject({ stopped: 'reply', reply: { text: 'I cannot refund this myself. — Sundae' } });
    // The second request carries the refusal as the tool message answering that call.
    const second = sent(fake.requests[1]).messages;
    const call = second.find((m) => m.role === 'assistant' && m.tool_calls)?.tool_calls?.[0];
    expect(call?.function).toEqual({ name: 'process_refund', arguments: '{"order_id":"SCP-1042"}' });
    const result = second.find((m) => m.role === 'tool');
    expect(result?.tool_call_id).toBe(call?.id);
    expect(JSON.parse(result?.content ?? '{}')).toMatchObject({ status: 'denied' });
    const [record] = await t.sequelize.query<{ tool_id: string; status: string; routing_key: string }>(
      'SELECT tool_id, status, routing_key FROM tool_calls WHERE agent_id = :a ORDER BY id DESC LIMIT 1',
      { replacements: { a: sundae }, type: QueryTypes.SELECT },
    );
    expect(record).toEqual({ tool_id: 'process_refund', status: 'denied', routing_key: 'jane@acme.com' });
    const [order] = await t.sequelize.query<{ status: string }>("SELECT status FROM scoop_orders WHERE id = 'SCP-1042'", {
      type: QueryTypes.SELECT,
    });
    expect(order?.status).toBe('delivered');
  });
});

describe('when the model calls a tool the run was not offered, with arguments that are not JSON', () => {
  test('then the call is still refused at dispatch and recorded denied: malformed arguments skip no check', async () => {
    fake.script((_req, i) => (i === 0 ? toolCalls([['process_refund', '{"order_id": ']]) : completion('I cannot do that. — Sundae')));
    const res = await send(fromJane).expect(200);
    expect(res.body.steps).toEqual([
      { tool: 'process_refund', input: '{"order_id": ', status: 'denied', error: expect.stringMatching(/refused at dispatch/) },
    ]);
    const [record] = await t.sequelize.query<{ tool_id: string; status: string }>(
      'SELECT tool_id, status FROM tool_calls WHERE agent_id = :a ORDER BY id DESC LIMIT 1',
      {
        replacements: { a: sundae },
        type: QueryTypes.SELECT,
      },
    );
    expect(record).toEqual({ tool_id: 'process_refund', status: 'denied' });
  });
});

describe('when a scheduled run with no message files a task twice', () => {
  test('then the run files it once, and the next run files its own', async () => {
    const kit = await makeToolkit(t, 'Tasks', ['task_creator']);
    const planner = await makeAgent(t, { name: 'Planner', toolkit_ids: [] });
    await t.admin().post(`/api/agents/${planner}/toolkits`).send({ toolkit_id: kit, allow_proactive: true }).expect(201);
    const twice = toolCalls([
      ['task_creator', '{"title":"Restock vanilla"}'],
      ['task_creator', '{"title":"Restock vanilla"}'],
    ]);
    const runOnce = async () => {
      fake.script((_req, i) => (i === 0 ? twice : completion('Filed.')));
      const res = await t.scheduler().post(`/api/agents/${planner}/runs`).send({ instruction: 'File the daily restock task.' }).expect(200);
      return res.body.steps.map((step: { output: { id: number } }) => step.output.id) as number[];
    };
    const [first, again] = await runOnce();
    expect(again).toBe(first);
    const [tomorrow] = await runOnce();
    expect(tomorrow).not.toBe(first);
  });
});

describe('when the model asks for two tools in one answer', () => {
  test('then both run in the order given, and the next request carries one assistant message and two results in that order', async () => {
    fake.script((_req, i) =>
      i === 0
        ? toolCalls([
            ['lookup_order', '{"order_id":"SCP-1043"}'],
            ['check_flavor_stock', '{}'],
          ])
        : completion('Done. — Sundae'),
    );
    const res = await send(fromJane).expect(200);
    expect(res.body.steps.map((s: { tool: string; status: string }) => [s.tool, s.status])).toEqual([
      ['lookup_order', 'success'],
      ['check_flavor_stock', 'success'],
    ]);
    const roles = sent(fake.requests[1])
      .messages.slice(-3)
      .map((m) => (m.role === 'assistant' ? `assistant:${m.tool_calls?.length}` : m.role));
    expect(roles).toEqual(['assistant:2', 'tool', 'tool']);
  });
});

describe('when the model never stops calling tools', () => {
  test(`then the run stops after ${MAX_STEPS} steps, says why, and has no reply`, async () => {
    fake.script(() => toolCalls([['lookup_order', '{"order_id":"SCP-1042"}']]));
    const res = await send(fromJane).expect(200);
    expect(res.body.stopped).toBe('max_steps');
    expect(res.body.error).toMatch(new RegExp(`${MAX_STEPS} model steps`));
    expect(res.body.steps).toHaveLength(MAX_STEPS);
    expect(res.body.reply).toEqual({ text: '', message_id: null, to: [], cc: [] });
    expect(fake.requests).toHaveLength(MAX_STEPS);
  });
});

describe('when the model returns malformed arguments', () => {
  test('then that call is a failed step that ran nothing, the model reads why, and the run goes on', async () => {
    fake.script((_req, i) =>
      i === 0 ? toolCalls([['lookup_order', '{"order_id": ']]) : completion('Sorry, let me try again later. — Sundae'),
    );
    const before = await t.sequelize.query('SELECT id FROM tool_calls', { type: QueryTypes.SELECT });
    const res = await send(fromJane).expect(200);
    expect(res.body.steps).toEqual([
      { tool: 'lookup_order', input: '{"order_id": ', status: 'failure', error: expect.stringMatching(/not valid JSON/) },
    ]);
    expect(res.body.stopped).toBe('reply');
    expect(await t.sequelize.query('SELECT id FROM tool_calls', { type: QueryTypes.SELECT })).toHaveLength(before.length);
  });

  test('then arguments that are JSON but do not fit the tool are a failed step too, naming the field', async () => {
    fake.script((_req, i) => (i === 0 ? toolCalls([['lookup_order', '{"order":"SCP-1042"}']]) : completion('Done. — Sundae')));
    const res = await send(fromJane).expect(200);
    expect(res.body.steps[0]).toMatchObject({
      tool: 'lookup_order',
      status: 'failure',
      error: expect.stringMatching(/does not fit the tool.*order/),
    });
  });
});

describe('when the model fails', () => {
  test('then the run ends as model_error with what happened, answered 200 because the run itself happened and is recorded', async () => {
    fake.script(() => apiError(500, 'the model is down'));
    const res = await send(fromJane).expect(200);
    expect(res.body).toMatchObject({ stopped: 'model_error', steps: [], reply: { text: '' } });
    expect(res.body.error).toMatch(/HTTP 500/);
    const runs = await t.admin().get(`/api/agents/${sundae}/runs?limit=1`).expect(200);
    expect(runs.body[0]).toMatchObject({ stopped: 'model_error', error: expect.stringMatching(/HTTP 500/) });
  });
});

describe('when a message continues a thread', () => {
  test("then the model reads the thread's earlier messages, calls and replies before the new one", async () => {
    fake.script((_req, i) => (i === 0 ? toolCalls([['lookup_order', '{"order_id":"SCP-1050"}']]) : completion('It has shipped. — Sundae')));
    const first = await send({ from: 'omar@example.org', body: 'Where is SCP-1050?' }).expect(200);
    fake.requests.length = 0;
    fake.script(() => completion('You are welcome. — Sundae'));
    await send({ from: 'omar@example.org', body: 'Thanks!' }, first.body.thread_id).expect(200);
    const messages = sent(fake.requests[0]).messages;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(messages[1]?.content).toMatch(/Where is SCP-1050\?/);
    expect(messages[4]?.content).toBe('It has shipped. — Sundae');
  });
});
