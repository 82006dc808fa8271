// Agent access rules over HTTP (SEMANTICS §9): operators manage them; every client route that
// handles a message or a sender checks them first, and a refused sender gets 403 sender_forbidden,
// one denied record naming the rules, and nothing else: no analysis, no model call, no tool. A
// scheduled run is not subject to them.
import { QueryTypes } from 'sequelize';
import { LocalModel } from '../../src/llm/local-model';
import type { AgentStepRequest, AgentStepResult } from '../../src/llm/agent-step';
import type { ModelContext, ModelSource } from '../../src/llm/language-model';
import type { EmailAnalysis, ModelEmail } from '../../src/llm/email-analysis';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

/** The local model, counting every call it is asked for. */
class CountingModel extends LocalModel {
  calls = 0;
  override analyzeEmail(email: ModelEmail, ctx: ModelContext): Promise<EmailAnalysis> {
    this.calls++;
    return super.analyzeEmail(email, ctx);
  }
  override writeReply(email: ModelEmail, analysis: EmailAnalysis, ctx: ModelContext): Promise<string> {
    this.calls++;
    return super.writeReply(email, analysis, ctx);
  }
  override answerQuestion(question: string, sources: ModelSource[], ctx: ModelContext): Promise<string> {
    this.calls++;
    return super.answerQuestion(question, sources, ctx);
  }
  override chat(message: string, ctx: ModelContext): Promise<string> {
    this.calls++;
    return super.chat(message, ctx);
  }
  override agentStep(request: AgentStepRequest): Promise<AgentStepResult> {
    this.calls++;
    return super.agentStep(request);
  }
}

const model = new CountingModel();
let t: TestApp;
let scout: number;

beforeAll(async () => {
  t = await createTestApp({ model });
  // Scout holds everything, openly; only her access rules keep strangers out.
  const everything = await makeToolkit(t, 'Everything', [
    'email_analyzer',
    'task_creator',
    'reply_generator',
    'document_search',
    'lookup_order',
    'process_refund',
    'check_flavor_stock',
  ]);
  scout = await makeAgent(t, { name: 'Scout', toolkit_ids: [] });
  await t.admin().post(`/api/agents/${scout}/toolkits`).send({ toolkit_id: everything, allow_proactive: true }).expect(201);
  await t.admin().post(`/api/agents/${scout}/access-rules`).send({ kind: 'allow', pattern: '*@TheScoop.com' }).expect(201);
  await t.admin().post(`/api/agents/${scout}/access-rules`).send({ kind: 'deny', pattern: 'intern@thescoop.com' }).expect(201);
});

afterAll(() => t.close());

const records = () =>
  t.sequelize.query<{ tool_id: string; status: string; routing_key: string | null; error: string | null }>(
    'SELECT tool_id, status, routing_key, error FROM tool_calls WHERE agent_id = :a ORDER BY id',
    {
      replacements: { a: scout },
      type: QueryTypes.SELECT,
    },
  );

describe("when an operator manages an agent's access rules", () => {
  test('then they are listed in order, normalized as gate rules are', async () => {
    const res = await t.admin().get(`/api/agents/${scout}/access-rules`).expect(200);
    expect(res.body).toEqual([
      { id: expect.any(Number), kind: 'allow', pattern: '*@thescoop.com' },
      { id: expect.any(Number), kind: 'deny', pattern: 'intern@thescoop.com' },
    ]);
  });

  test('then a bad pattern is a 422 that says why, a repeated rule a 409, and a client may not touch them', async () => {
    const bad = await t.admin().post(`/api/agents/${scout}/access-rules`).send({ kind: 'allow', pattern: '*thescoop.com' }).expect(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'pattern'], msg: expect.stringMatching(/has no @/) });
    await t.admin().post(`/api/agents/${scout}/access-rules`).send({ kind: 'allow', pattern: '*@thescoop.com' }).expect(409);
    await t.client().get(`/api/agents/${scout}/access-rules`).expect(403);
    await t.admin().get('/api/agents/999999/access-rules').expect(404);
  });

  test('then a rule can be removed, and removing it twice is a 404', async () => {
    const added = (
      await t.admin().post(`/api/agents/${scout}/access-rules`).send({ kind: 'deny', pattern: 'temp@thescoop.com' }).expect(201)
    ).body;
    await t.admin().delete(`/api/agents/${scout}/access-rules/${added.id}`).expect(204);
    await t.admin().delete(`/api/agents/${scout}/access-rules/${added.id}`).expect(404);
  });

  test('then the explanation view shows the access decision beside the attachments', async () => {
    const res = await t.admin().get(`/api/agents/${scout}/tools`).query({ sender: 'jane@acme.com' }).expect(200);
    expect(res.body).toMatchObject({ access: { admitted: false, reason: 'allow_list_default' }, tools: [] });
  });
});

const MESSAGE = { subject: 'Refund', body: 'Please refund SCP-1042.' };
const clientRoutes: [string, (sender: string) => Promise<{ status: number; body: { code?: string } }>][] = [
  [
    'email analysis',
    (from) =>
      t
        .client()
        .post(`/api/agents/${scout}/email/analyze`)
        .send({ from, ...MESSAGE }),
  ],
  [
    'the email workflow',
    (from) =>
      t
        .client()
        .post(`/api/agents/${scout}/workflows/email`)
        .send({ from, ...MESSAGE }),
  ],
  ['document search', (sender) => t.client().post(`/api/agents/${scout}/documents/search`).send({ query: 'refund', sender })],
  ['document questions', (sender) => t.client().post(`/api/agents/${scout}/documents/ask`).send({ question: 'refund?', sender })],
  [
    'a tool call',
    (sender) =>
      t
        .client()
        .post(`/api/agents/${scout}/tool-calls`)
        .send({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender }),
  ],
  [
    'an agent message',
    (from) =>
      t
        .client()
        .post(`/api/agents/${scout}/messages`)
        .send({ message: { from, ...MESSAGE } }),
  ],
  ['chat', (sender) => t.client().post(`/api/agents/${scout}/chat`).send({ message: 'hello', sender })],
];

describe.each(clientRoutes)('when a refused sender reaches %s', (_name, send) => {
  test.each([
    ['a stranger the allow list leaves out', 'jane@acme.com', /allow_list_default/],
    ['a sender a deny rule names', 'Intern <intern+x@TheScoop.com>', /deny_rule \(deny intern@thescoop\.com\)/],
    ['a sender with no routing key', 'not an address', /no_routing_key/],
  ])('then %s gets 403 sender_forbidden, one denied record naming the access rules, and nothing else', async (_who, from, why) => {
    const before = (await records()).length;
    const calls = model.calls;
    const res = await send(from);
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 403, code: 'sender_forbidden' });
    const added = (await records()).slice(before);
    expect(added).toEqual([
      expect.objectContaining({ tool_id: 'agent_access_rules', status: 'denied', error: expect.stringMatching(why) }),
    ]);
    expect(model.calls).toBe(calls);
    const [order] = await t.sequelize.query<{ status: string }>("SELECT status FROM scoop_orders WHERE id = 'SCP-1042'", {
      type: QueryTypes.SELECT,
    });
    expect(order?.status).toBe('delivered');
  });
});

describe('when an admitted sender writes', () => {
  test('then the agent handles the message as usual', async () => {
    const res = await t
      .client()
      .post(`/api/agents/${scout}/email/analyze`)
      .send({ from: 'mara@thescoop.com', ...MESSAGE })
      .expect(200);
    expect(res.body.routing_key).toBe('mara@thescoop.com');
  });
});

describe('when a scheduled run starts', () => {
  test('then the access rules do not apply: a tool call runs on the attachments that allow scheduled runs', async () => {
    const res = await t
      .scheduler()
      .post(`/api/agents/${scout}/tool-calls`)
      .send({ tool: 'check_flavor_stock', scheduled: true })
      .expect(200);
    expect(res.body.status).toBe('success');
  });

  test('then a scheduled agent run goes ahead too', async () => {
    const res = await t
      .scheduler()
      .post(`/api/agents/${scout}/runs`)
      .send({ instruction: 'Check the flavor stock for the morning report.' })
      .expect(200);
    expect(res.body).toMatchObject({
      run: 'scheduled',
      routing_key: null,
      stopped: 'reply',
      steps: [expect.objectContaining({ tool: 'check_flavor_stock', status: 'success' })],
    });
  });
});
