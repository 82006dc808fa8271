// The seed's "Recipes" table, migrated to toolkits: each legacy enabled_tools string becomes an
// agent through POST /agents (the same planner as the bulk migration), then every tool-bearing
// endpoint is called and checked: which answer 403, which degrade, which work, and which
// tool-call records appear, with their canonical ids and legacy names.
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent } from '../support/factories';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const MESSAGE = {
  from: 'Jane Doe <jane@acme.com>',
  subject: 'Order SCP-1042 arrived melted',
  body: 'Hi,\n\nMy order SCP-1042 arrived melted. Please refund it by Friday.\n\nThanks,\nJane',
  message_id: '<m1@acme.com>',
};

type Outcome = 200 | 403;
interface Recipe {
  purpose: string;
  enabled_tools: string;
  analyze: Outcome;
  /** task_creator as the analyze response reports it, when analyze works. */
  analyzeTasks?: 'used' | 'skipped';
  workflow: Outcome;
  /** Stage statuses analysis/tasks/reply, when the workflow works. */
  stages?: [string, string, string];
  search: Outcome;
  ask: Outcome;
  /** The records the calls above leave, oldest first: [tool_id, tool_name, status]. */
  records: [string, string, string][];
}

const RECIPES: Recipe[] = [
  {
    purpose: 'Pure chat assistant',
    enabled_tools: '',
    analyze: 403,
    workflow: 403,
    search: 403,
    ask: 403,
    records: [
      ['email_analyzer', 'email_analyzer', 'denied'],
      ['email_analyzer', 'email_analyzer', 'denied'],
      ['document_search', 'document_search', 'denied'],
      ['document_search', 'document_search', 'denied'],
    ],
  },
  {
    purpose: 'Email triage only',
    enabled_tools: 'email_analyzer',
    analyze: 200,
    analyzeTasks: 'skipped',
    workflow: 200,
    stages: ['completed', 'skipped', 'fallback'],
    search: 403,
    ask: 403,
    records: [
      ['email_analyzer', 'email_analyzer', 'success'],
      ['task_creator', 'task_creator', 'skipped'],
      ['email_analyzer', 'email_analyzer', 'success'],
      ['task_creator', 'task_creator', 'skipped'],
      ['reply_generator', 'multi_agent_reply_agent', 'skipped'],
      ['document_search', 'document_search', 'denied'],
      ['document_search', 'document_search', 'denied'],
    ],
  },
  {
    purpose: 'Email triage that files work',
    enabled_tools: 'email_analyzer,task_creator',
    analyze: 200,
    analyzeTasks: 'used',
    workflow: 200,
    stages: ['completed', 'completed', 'fallback'],
    search: 403,
    ask: 403,
    records: [
      ['email_analyzer', 'email_analyzer', 'success'],
      ['task_creator', 'task_creator', 'success'],
      ['email_analyzer', 'email_analyzer', 'success'],
      ['task_creator', 'task_creator', 'success'],
      ['reply_generator', 'multi_agent_reply_agent', 'skipped'],
      ['document_search', 'document_search', 'denied'],
      ['document_search', 'document_search', 'denied'],
    ],
  },
  {
    purpose: 'Full email operations',
    enabled_tools: 'email_analyzer,task_creator,reply_generator',
    analyze: 200,
    analyzeTasks: 'used',
    workflow: 200,
    stages: ['completed', 'completed', 'completed'],
    search: 403,
    ask: 403,
    records: [
      ['email_analyzer', 'email_analyzer', 'success'],
      ['task_creator', 'task_creator', 'success'],
      ['email_analyzer', 'email_analyzer', 'success'],
      ['task_creator', 'task_creator', 'success'],
      ['reply_generator', 'multi_agent_reply_agent', 'success'],
      ['document_search', 'document_search', 'denied'],
      ['document_search', 'document_search', 'denied'],
    ],
  },
  {
    purpose: 'Knowledge-base Q&A',
    enabled_tools: 'document_search',
    analyze: 403,
    workflow: 403,
    search: 200,
    ask: 200,
    records: [
      ['email_analyzer', 'email_analyzer', 'denied'],
      ['email_analyzer', 'email_analyzer', 'denied'],
      ['document_search', 'document_search', 'success'],
      ['document_search', 'document_search', 'success'],
    ],
  },
  {
    purpose: 'Everything',
    enabled_tools: 'email_analyzer,task_creator,document_search,reply_generator',
    analyze: 200,
    analyzeTasks: 'used',
    workflow: 200,
    stages: ['completed', 'completed', 'completed'],
    search: 200,
    ask: 200,
    records: [
      ['email_analyzer', 'email_analyzer', 'success'],
      ['task_creator', 'task_creator', 'success'],
      ['email_analyzer', 'email_analyzer', 'success'],
      ['task_creator', 'task_creator', 'success'],
      ['reply_generator', 'multi_agent_reply_agent', 'success'],
      ['document_search', 'document_search', 'success'],
      ['document_search', 'document_search', 'success'],
    ],
  },
];

describe.each(RECIPES)('when the legacy recipe "$purpose" ($enabled_tools) is migrated to toolkits', (recipe) => {
  let agent: number;

  beforeAll(async () => {
    agent = await makeAgent(t, { name: recipe.purpose, enabled_tools: recipe.enabled_tools });
    await t
      .client()
      .post(`/api/agents/${agent}/documents`)
      .send({
        title: 'Refund policy',
        content: 'Melted orders are refunded in full within five days. Refunds go back to the original card.',
      })
      .expect(201);
  });

  test(`then email analysis answers ${recipe.analyze}${recipe.analyzeTasks ? ` with task_creator ${recipe.analyzeTasks}` : ''}`, async () => {
    const res = await t.client().post(`/api/agents/${agent}/email/analyze`).send(MESSAGE).expect(recipe.analyze);
    if (recipe.analyze === 403) {
      expect(res.body).toMatchObject({
        code: 'tool_forbidden',
        tool: 'email_analyzer',
        detail: 'This agent does not have email_analyzer tool enabled',
      });
      return;
    }
    expect(res.body.tools).toEqual({ email_analyzer: 'used', task_creator: recipe.analyzeTasks });
    expect(res.body.tasks.length > 0).toBe(recipe.analyzeTasks === 'used');
  });

  test(`then the workflow answers ${recipe.workflow}${recipe.stages ? ` with stages ${recipe.stages.join('/')}` : ''}`, async () => {
    const res = await t.client().post(`/api/agents/${agent}/workflows/email`).send(MESSAGE).expect(recipe.workflow);
    if (recipe.workflow === 403) {
      expect(res.body.code).toBe('tool_forbidden');
      return;
    }
    expect(res.body.stages.map((s: { status: string }) => s.status)).toEqual(recipe.stages);
    const replyStage = recipe.stages![2];
    expect(res.body.reply.source).toBe(replyStage === 'completed' ? 'reply_agent' : 'analysis_fallback');
    if (replyStage === 'fallback') expect(res.body.reply.text).toBe(res.body.analysis.suggested_reply);
  });

  test(`then document search answers ${recipe.search} and ask ${recipe.ask}`, async () => {
    const search = await t.client().post(`/api/agents/${agent}/documents/search`).send({ query: 'melted refund' }).expect(recipe.search);
    const ask = await t
      .client()
      .post(`/api/agents/${agent}/documents/ask`)
      .send({ question: 'Are melted orders refunded?' })
      .expect(recipe.ask);
    if (recipe.search === 200) expect(search.body.results[0]).toMatchObject({ title: 'Refund policy' });
    else expect(search.body).toMatchObject({ code: 'tool_forbidden', detail: 'This agent does not have document_search tool enabled' });
    if (recipe.ask === 200) expect(ask.body.answer).toContain('Melted orders are refunded in full');
  });

  test('then chat works, needing no tool', async () => {
    const res = await t.client().post(`/api/agents/${agent}/chat`).send({ message: 'Hello there' }).expect(200);
    expect(typeof res.body.reply).toBe('string');
  });

  test('then the calls leave exactly the expected tool-call records', async () => {
    const res = await t.admin().get(`/api/agents/${agent}/tool-calls?limit=100`).expect(200);
    const oldestFirst = [...res.body]
      .reverse()
      .map((c: { tool_id: string; tool_name: string; status: string }) => [c.tool_id, c.tool_name, c.status]);
    expect(oldestFirst).toEqual(recipe.records);
  });
});

describe('when the same workflow message is retried', () => {
  test('then the tasks it filed are not duplicated', async () => {
    const agent = await makeAgent(t, { name: 'Retry', enabled_tools: 'email_analyzer,task_creator' });
    const first = await t.client().post(`/api/agents/${agent}/workflows/email`).send(MESSAGE).expect(200);
    const second = await t.client().post(`/api/agents/${agent}/workflows/email`).send(MESSAGE).expect(200);
    expect(first.body.tasks.length).toBeGreaterThan(0);
    expect(second.body.tasks).toEqual(first.body.tasks);
    const tasks = await t.client().get(`/api/agents/${agent}/tasks`).expect(200);
    expect(tasks.body).toHaveLength(first.body.tasks.length);
    expect(tasks.body[0]).toMatchObject({ agent_id: agent, source_message_id: '<m1@acme.com>', status: expect.any(String) });
  });
});
