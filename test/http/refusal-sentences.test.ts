// What a refusal says. A run's refusal of a tool it was not offered is one text, whether a model's
// step reads it or the denied record keeps it; toolgate's own routes (and a host's, through
// requireTool()) say what is true of this run, why it was not offered; the routes ported from the
// legacy API keep its sentence, which their clients match on.
import express from 'express';
import request from 'supertest';
import { QueryTypes } from 'sequelize';
import { ToolForbiddenError } from '../../src/errors';
import { OpenAIModel } from '../../src/llm/openai-model';
import { createTestApp, type TestApp } from '../support/app';
import { completion, startFakeOpenAI, toolCalls, type FakeOpenAI } from '../support/fake-openai';
import { createSundae, type Sundae } from '../support/scoop';
import { makeAgent, makeToolkit } from '../support/factories';

let fake: FakeOpenAI;
let t: TestApp;
let sundae: Sundae;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  t = await createTestApp({
    model: new OpenAIModel({ apiKey: 'sk-test', baseURL: fake.baseURL, model: 'gpt-test', timeoutMs: 5_000, maxRetries: 0 }),
  });
  sundae = await createSundae(t, 'gate');
});

afterAll(async () => {
  await t.close();
  await fake.close();
});

const lastRecord = async (agent: number) =>
  (
    await t.sequelize.query<{ tool_id: string; status: string; error: string | null }>(
      'SELECT tool_id, status, error FROM tool_calls WHERE agent_id = :agent ORDER BY id DESC LIMIT 1',
      {
        replacements: { agent },
        type: QueryTypes.SELECT,
      },
    )
  )[0];

const dispatch = (agent: number, body: Record<string, unknown>) => t.client().post(`/api/agents/${agent}/tool-calls`).send(body);

describe('when a model calls a tool its run was not offered', () => {
  test('then its step and the denied record carry the same text', async () => {
    fake.script((_req, i) =>
      i === 0 ? toolCalls([['process_refund', '{"order_id":"SCP-1042"}']]) : completion('The shop decides refunds. — Sundae'),
    );
    const res = await t
      .client()
      .post(`/api/agents/${sundae.id}/messages`)
      .send({ message: { from: 'jane@acme.com', body: 'Refund SCP-1042, please.' } })
      .expect(200);
    const [step] = res.body.steps as { status: string; error: string }[];
    expect(step).toMatchObject({ status: 'denied', error: 'Not offered to this run: refused at dispatch, nothing ran.' });
    expect(await lastRecord(sundae.id)).toEqual({ tool_id: 'process_refund', status: 'denied', error: step!.error });
  });
});

describe('when POST /tool-calls names a tool the agent holds for other senders only', () => {
  test('then the 403 says its gate did not admit this sender, not that the agent lacks the tool', async () => {
    const res = await dispatch(sundae.id, { tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' }).expect(403);
    expect(res.body).toMatchObject({ code: 'tool_forbidden', tool: 'process_refund' });
    expect(res.body.detail).toMatch(
      /^process_refund is not offered to this run: its gate admits listed senders only, and this sender is none of them\./,
    );
    expect(res.body.detail).not.toMatch(/does not have/);
  });

  test('then a deny rule, a message with no sender address and a scheduled run are each said as what they are', async () => {
    const kit = await makeToolkit(t, 'Stock', ['check_flavor_stock']);
    const agent = await makeAgent(t, { name: 'Denier', toolkit_ids: [] });
    await t
      .admin()
      .post(`/api/agents/${agent}/toolkits`)
      .send({ toolkit_id: kit, rules: [{ kind: 'deny', pattern: '*@acme.com' }] })
      .expect(201);
    const call = { tool: 'check_flavor_stock', input: { flavor: 'Mint Chip' } };
    expect((await dispatch(agent, { ...call, sender: 'jane@acme.com' }).expect(403)).body.detail).toMatch(
      /: a deny rule of its gate matches this sender\./,
    );
    expect((await dispatch(agent, { ...call, sender: 'not an address' }).expect(403)).body.detail).toMatch(
      /: this message has no sender address its gate could check\./,
    );
    expect(
      (
        await t
          .scheduler()
          .post(`/api/agents/${agent}/tool-calls`)
          .send({ ...call, scheduled: true })
          .expect(403)
      ).body.detail,
    ).toMatch(/: its attachment does not allow scheduled runs\./);
  });

  test('then a tool no attachment carries says so', async () => {
    const res = await dispatch(sundae.id, {
      tool: 'send_email',
      input: { to: 'jane@acme.com', subject: 'Hi', body: 'Hello' },
      sender: 'mara@thescoop.com',
    }).expect(403);
    expect(res.body.detail).toMatch(/^send_email is not offered to this run: no toolkit attached to this agent carries it\./);
  });
});

describe('when a legacy route refuses its gate tool', () => {
  test('then the detail keeps the legacy sentence, word for word', async () => {
    const res = await t
      .client()
      .post(`/api/agents/${sundae.id}/email/analyze`)
      .send({ from: 'jane@acme.com', body: 'My order arrived melted.' })
      .expect(403);
    expect(res.body).toMatchObject({
      code: 'tool_forbidden',
      tool: 'email_analyzer',
      detail: 'This agent does not have email_analyzer tool enabled',
    });
  });
});

describe('when a host route refuses through requireTool()', () => {
  test("then it says what is true of the run, as toolgate's own routes do", async () => {
    const host = express();
    host.use(express.json());
    host.post('/host/:id/refund', t.tg.toolRun(), t.tg.requireTool('process_refund'), (_req, res) => res.json({ ok: true }));
    host.use(t.tg.errorHandler());
    const res = await request(host).post(`/host/${sundae.id}/refund`).send({ from: 'jane@acme.com' }).expect(403);
    expect(res.body).toEqual({
      code: 'tool_forbidden',
      tool: 'process_refund',
      detail: expect.stringMatching(/^process_refund is not offered to this run: its gate admits listed senders only/),
    });
  });
});

describe('when a host constructs the error itself', () => {
  test('then it keeps its code and tool, says the tool is not offered, and carries the reason it was given', () => {
    const plain = new ToolForbiddenError('lookup_order');
    expect(plain).toMatchObject({
      status: 403,
      code: 'tool_forbidden',
      tool: 'lookup_order',
      reason: null,
      message: 'lookup_order is not offered to this run: refused at dispatch, nothing ran.',
    });
    expect(new ToolForbiddenError('lookup_order', 'proactive_off').reason).toBe('proactive_off');
    expect(new ToolForbiddenError('lookup_order', 'deny_rule', { legacySentence: true }).message).toBe(
      'This agent does not have lookup_order tool enabled',
    );
  });
});
