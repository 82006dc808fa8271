// Text PostgreSQL cannot store, and what comes after a tool ran (SEMANTICS §13). A lone UTF-16
// surrogate or a NUL in what a caller sends is a 422 before anything runs, on every route; the same
// in what a model or a tool wrote is made storable, so a run that called a tool answers 200; and when
// toolgate's own work fails after a tool ran, the answer still says what ran (never a 5xx that
// invites the retry to run it again).
import { QueryTypes } from 'sequelize';
import { z } from 'zod';
import { SCOOP_TOOLS } from '../../src/app/demo/scoop-tools';
import { LocalModel } from '../../src/llm/local-model';
import { OpenAIModel } from '../../src/llm/openai-model';
import { defineTool } from '../../src/tools/tool-registry';
import { createTestApp, type TestApp } from '../support/app';
import { completion, startFakeOpenAI, toolCalls, type FakeOpenAI } from '../support/fake-openai';
import { makeAgent, makeToolkit } from '../support/factories';

let fake: FakeOpenAI;
let t: TestApp;
let sundae: number;
let scout: number;

// A tool whose own words hold a NUL and a lone surrogate: its error must not lose its record.
const garbled = defineTool({
  id: 'garbled_lookup',
  display_name: 'Garbled lookup',
  summary: 'Fails with words no column can hold.',
  input: z.strictObject({}),
  execute() {
    throw new Error(`no such order\u0000${'\ud83c'}`);
  },
});

beforeAll(async () => {
  fake = await startFakeOpenAI();
  t = await createTestApp({
    tools: [...SCOOP_TOOLS, garbled],
    model: new OpenAIModel({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'gpt-test', timeoutMs: 5_000, maxRetries: 0 }),
  });
  const kit = await makeToolkit(t, 'Everything', ['lookup_order', 'check_flavor_stock', 'send_email', 'document_search', 'garbled_lookup']);
  sundae = await makeAgent(t, { name: 'Sundae', toolkit_ids: [kit] });
  scout = await makeAgent(t, { name: 'Scout', toolkit_ids: [] });
  await t.admin().post(`/api/agents/${scout}/toolkits`).send({ toolkit_id: kit, allow_proactive: true }).expect(201);
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

const count = async (table: string) =>
  Number((await t.sequelize.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`, { type: QueryTypes.SELECT }))[0]!.n);
const HIGH = '\ud83c';
const LOW = '\udf66';

describe('when a caller sends text that cannot be stored', () => {
  const message = { from: 'jane@acme.com', subject: 'Order', body: 'Order SCP-1042 arrived melted.', message_id: '<m1@acme.com>' };

  test.each([
    ['subject', { message: { ...message, subject: `Melted ${HIGH}` } }, ['body', 'message', 'subject']],
    ['from', { message: { ...message, from: `Jane${LOW} <jane@acme.com>` } }, ['body', 'message', 'from']],
    ['body', { message: { ...message, body: `Pints ${HIGH} melted` } }, ['body', 'message', 'body']],
    ['message_id', { message: { ...message, message_id: `<m${HIGH}@acme.com>` } }, ['body', 'message', 'message_id']],
    ['a key', { message: { ...message, [`x${HIGH}`]: 1 } }, ['body', 'message', `x${HIGH}`]],
  ])('then a lone surrogate in %s of a message is a 422 naming it, and nothing runs', async (_where, body, loc) => {
    const [runs, records] = [await count('agent_runs'), await count('tool_calls')];
    const res = await t.client().post(`/api/agents/${sundae}/messages`).send(body).expect(422);
    expect(res.body).toMatchObject({ code: 'validation_error', detail: [{ loc, type: 'unstorable_text' }] });
    expect([await count('agent_runs'), await count('tool_calls')]).toEqual([runs, records]);
    expect(fake.requests).toHaveLength(0);
  });

  test("then a lone surrogate in a scheduled instruction, or a NUL in a tool's input, is a 422 and nothing runs", async () => {
    await t
      .scheduler()
      .post(`/api/agents/${scout}/runs`)
      .send({ instruction: `Send the report ${HIGH}` })
      .expect(422);
    const nul = await t
      .client()
      .post(`/api/agents/${sundae}/tool-calls`)
      .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042\u0000' }, sender: 'jane@acme.com' })
      .expect(422);
    expect(nul.body.detail[0]).toMatchObject({ loc: ['body', 'input', 'order_id'], type: 'unstorable_text' });
    expect(await count('agent_runs')).toBe(0);
    expect(await count('tool_calls')).toBe(0);
  });
});

describe('when a model writes text that cannot be stored', () => {
  test("then a scheduled run's send_email with a lone surrogate in its body sends once, is recorded success, and answers 200 with the text made storable", async () => {
    fake.requests.length = 0;
    fake.script((_req, i) =>
      i === 0
        ? toolCalls([['send_email', JSON.stringify({ to: 'mara@thescoop.com', subject: 'Stock', body: `Mint ${HIGH} 14 pints` })]])
        : completion(`Sent ${LOW}. — Scout`),
    );
    const outbox = await count('scoop_outbox');
    const res = await t
      .scheduler()
      .post(`/api/agents/${scout}/runs`)
      .send({ instruction: 'Send the morning stock report to mara@thescoop.com.' })
      .expect(200);
    expect(res.body).toMatchObject({ stopped: 'reply', steps: [{ tool: 'send_email', status: 'success' }] });
    expect(await count('scoop_outbox')).toBe(outbox + 1);
    const [run] = await t.sequelize.query<{ steps: { input: { body: string } }[]; reply: string; stopped: string }>(
      'SELECT steps, reply, stopped FROM agent_runs WHERE id = :id',
      {
        replacements: { id: res.body.run_id },
        type: QueryTypes.SELECT,
      },
    );
    expect(run).toMatchObject({ stopped: 'reply', reply: 'Sent \ufffd. — Scout', steps: [{ input: { body: 'Mint \ufffd 14 pints' } }] });
    expect(
      (await t.sequelize.query("SELECT status FROM tool_calls WHERE tool_id = 'send_email'", { type: QueryTypes.SELECT })).at(-1),
    ).toEqual({ status: 'success' });
  });

  test('then a document_search whose query holds a lone surrogate runs once, is recorded success, and the run is completed: a 200, not a 500 that leaves it open', async () => {
    fake.requests.length = 0;
    fake.script((_req, i) =>
      i === 0 ? toolCalls([['document_search', JSON.stringify({ query: `melted ${HIGH} pints` })]]) : completion('Searched. — Sundae'),
    );
    const res = await t
      .client()
      .post(`/api/agents/${sundae}/messages`)
      .send({ message: { from: 'jane@acme.com', body: 'What is your policy on melted pints?' } })
      .expect(200);
    expect(res.body).toMatchObject({ stopped: 'reply', steps: [{ tool: 'document_search', status: 'success' }] });
    const [run] = await t.sequelize.query<{ completed: boolean; query: string }>(
      "SELECT completed_at IS NOT NULL AS completed, steps->0->'input'->>'query' AS query FROM agent_runs WHERE id = :id",
      {
        replacements: { id: res.body.run_id },
        type: QueryTypes.SELECT,
      },
    );
    expect(run).toEqual({ completed: true, query: 'melted \ufffd pints' });
    expect(
      (await t.sequelize.query("SELECT status FROM tool_calls WHERE tool_id = 'document_search'", { type: QueryTypes.SELECT })).at(-1),
    ).toEqual({ status: 'success' });
  });

  test('then a tool that fails with a NUL and a lone surrogate in its error keeps its record, made storable, and the answer is a 200', async () => {
    fake.requests.length = 0;
    fake.script((_req, i) => (i === 0 ? toolCalls([['garbled_lookup', '{}']]) : completion('Looked. — Sundae')));
    const res = await t
      .client()
      .post(`/api/agents/${sundae}/messages`)
      .send({ message: { from: 'jane@acme.com', body: 'Where is SCP-1042?' } })
      .expect(200);
    expect(res.body.steps[0]).toMatchObject({ tool: 'garbled_lookup', status: 'failure' });
    const [record] = await t.sequelize.query<{ status: string; error: string }>(
      "SELECT status, error FROM tool_calls WHERE tool_id = 'garbled_lookup'",
      { type: QueryTypes.SELECT },
    );
    expect(record).toEqual({ status: 'failure', error: 'no such order\ufffd\ufffd' });
  });
});

describe("when toolgate's own work fails after a tool ran", () => {
  test('then the answer is a 200 that says what ran (stopped: error), not a 5xx that invites the retry to run it again', async () => {
    fake.requests.length = 0;
    fake.script((_req, i) => (i === 0 ? toolCalls([['lookup_order', '{"order_id":"SCP-1042"}']]) : completion('Found it. — Sundae')));
    // The run's end cannot be written: a check every new row version breaks (NOT VALID spares the old ones).
    await t.sequelize.query('ALTER TABLE agent_runs ADD CONSTRAINT no_end CHECK (completed_at IS NULL) NOT VALID');
    try {
      const res = await t
        .client()
        .post(`/api/agents/${sundae}/messages`)
        .send({ message: { from: 'jane@acme.com', body: 'Where is SCP-1042?' } })
        .expect(200);
      expect(res.body).toMatchObject({
        stopped: 'error',
        error: expect.stringMatching(/could not be recorded after a tool ran/),
        steps: [{ tool: 'lookup_order', status: 'success' }],
      });
      expect(res.body.reply.text).toBe('Found it. — Sundae');
    } finally {
      await t.sequelize.query('ALTER TABLE agent_runs DROP CONSTRAINT no_end');
    }
  });

  test('then the email workflow, its tasks filed, reports the reply stage it could not run as failed in a 200, and its retry files no task again', async () => {
    const local = await createTestApp();
    try {
      const agent = await makeAgent(local, { name: 'Sundae', enabled_tools: 'email_analyzer,task_creator,reply_generator' });
      // The reply stage's record cannot be written, so it cannot run; the tasks before it were filed.
      await local.sequelize.query("ALTER TABLE tool_calls ADD CONSTRAINT no_reply CHECK (tool_id <> 'reply_generator') NOT VALID");
      const workflow = () =>
        local
          .client()
          .post(`/api/agents/${agent}/workflows/email`)
          .set('Idempotency-Key', 'k-workflow')
          .send({ from: 'jane@acme.com', subject: 'Melted order', body: 'My order arrived melted. Please refund it by Friday.' });
      const first = await workflow().expect(200);
      expect(first.body.stages).toEqual([
        { name: 'analysis', tool: 'email_analyzer', status: 'completed' },
        { name: 'tasks', tool: 'task_creator', status: 'completed' },
        { name: 'reply', tool: 'reply_generator', status: 'failed', error: expect.stringMatching(/toolgate's log has it/) },
      ]);
      expect(first.body.reply.source).toBe('analysis_fallback');
      const filed = Number(
        (
          await local.sequelize.query<{ n: string }>('SELECT count(*) AS n FROM tasks WHERE agent_id = :agent', {
            replacements: { agent },
            type: QueryTypes.SELECT,
          })
        )[0]!.n,
      );
      expect(filed).toBe(first.body.tasks.length);
      const again = await workflow().expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(
        Number(
          (
            await local.sequelize.query<{ n: string }>('SELECT count(*) AS n FROM tasks WHERE agent_id = :agent', {
              replacements: { agent },
              type: QueryTypes.SELECT,
            })
          )[0]!.n,
        ),
      ).toBe(filed);
    } finally {
      await local.close();
    }
  });

  test('then a failure before any tool ran is still an error status, and the retry of the same Message-ID runs anew', async () => {
    fake.requests.length = 0;
    fake.script(() => completion('Hello. — Sundae'));
    const message = { message: { from: 'jane@acme.com', message_id: '<jane-hello@acme.com>', body: 'Hello there.' } };
    await t.sequelize.query('ALTER TABLE agent_runs ADD CONSTRAINT no_end CHECK (completed_at IS NULL) NOT VALID');
    try {
      const res = await t.client().post(`/api/agents/${sundae}/messages`).send(message);
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(res.body.code).toBe('internal_error');
    } finally {
      await t.sequelize.query('ALTER TABLE agent_runs DROP CONSTRAINT no_end');
    }
    // The failed handling was undone: the retry is no replay of it, nor a 409 while it stays open.
    const retry = await t.client().post(`/api/agents/${sundae}/messages`).send(message).expect(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(retry.body).toMatchObject({ stopped: 'reply', reply: { text: 'Hello. — Sundae' } });
    const runs = await t.sequelize.query("SELECT id FROM agent_runs WHERE message->>'message_id' = '<jane-hello@acme.com>'", {
      type: QueryTypes.SELECT,
    });
    expect(runs).toHaveLength(1);
  });

  test('then a call filed for approval counts as having acted: a fault after it is a 200 that names the request, and the run is kept', async () => {
    const kit = await makeToolkit(t, 'Approved lookups', ['lookup_order']);
    const careful = await makeAgent(t, { name: 'Careful', toolkit_ids: [] });
    await t
      .admin()
      .post(`/api/agents/${careful}/toolkits`)
      .send({ toolkit_id: kit, approval: { approvers: ['*@thescoop.com'] } })
      .expect(201);
    fake.requests.length = 0;
    fake.script((_req, i) => (i === 0 ? toolCalls([['lookup_order', '{"order_id":"SCP-1042"}']]) : completion('Filed. — Careful')));
    await t.sequelize.query('ALTER TABLE agent_runs ADD CONSTRAINT no_end CHECK (completed_at IS NULL) NOT VALID');
    try {
      const res = await t
        .client()
        .post(`/api/agents/${careful}/messages`)
        .send({ message: { from: 'jane@acme.com', message_id: '<jane-filed@acme.com>', body: 'Where is SCP-1042?' } })
        .expect(200);
      expect(res.body).toMatchObject({
        stopped: 'error',
        steps: [{ tool: 'lookup_order', status: 'pending_approval', approval_request_id: expect.any(Number) }],
      });
    } finally {
      await t.sequelize.query('ALTER TABLE agent_runs DROP CONSTRAINT no_end');
    }
    expect(
      await t.sequelize.query("SELECT id FROM agent_runs WHERE message->>'message_id' = '<jane-filed@acme.com>'", {
        type: QueryTypes.SELECT,
      }),
    ).toHaveLength(1);
  });

  test('then a host model that throws something other than a model error after a tool ran ends the run stopped: error, in a 200', async () => {
    let step = 0;
    class Flaky extends LocalModel {
      override async agentStep(request: Parameters<LocalModel['agentStep']>[0]) {
        step += 1;
        if (step === 1)
          return { kind: 'tool_calls' as const, calls: [{ call_id: 'c1', tool: 'lookup_order', arguments: '{"order_id":"SCP-1042"}' }] };
        void request;
        throw new TypeError('the host model broke');
      }
    }
    const local = await createTestApp({ model: new Flaky() });
    try {
      const kit = await makeToolkit(local, 'Lookups', ['lookup_order']);
      const agent = await makeAgent(local, { name: 'Sundae', toolkit_ids: [kit] });
      const res = await local
        .client()
        .post(`/api/agents/${agent}/messages`)
        .send({ message: { from: 'jane@acme.com', body: 'Where is SCP-1042?' } })
        .expect(200);
      expect(res.body).toMatchObject({
        stopped: 'error',
        error: expect.stringMatching(/toolgate's log has it/),
        steps: [{ tool: 'lookup_order', status: 'success' }],
      });
    } finally {
      await local.close();
    }
  });
});
