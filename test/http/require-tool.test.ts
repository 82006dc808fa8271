// requireTool() and toolRun() on a host's own routes: a gate tool refuses with a sentence saying why
// it is not offered, and a denied record; an enhancement tool never refuses and the route reads whether it is
// offered; misconfiguration fails at construction, not on the first request.
import express from 'express';
import request from 'supertest';
import { QueryTypes } from 'sequelize';
import { currentRun } from '../../middleware/current-run';
import { ToolgateConfigError } from '../../src/errors';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;
let host: express.Express;
let open: number;
let gated: number;

beforeAll(async () => {
  t = await createTestApp();
  const analysis = await makeToolkit(t, 'Analysis', ['email_analyzer']);
  const tasks = await makeToolkit(t, 'Tasks', ['task_creator']);
  open = await makeAgent(t, { name: 'Open', toolkit_ids: [analysis, tasks] });
  gated = await makeAgent(t, { name: 'Gated', toolkit_ids: [] });
  await t
    .admin()
    .post(`/api/agents/${gated}/toolkits`)
    .send({ toolkit_id: analysis, rules: [{ kind: 'allow', pattern: '*@thescoop.com' }] })
    .expect(201);

  host = express();
  host.use(express.json());
  host.post('/triage/:id', t.tg.toolRun(), t.tg.requireTool('email_analyzer'), t.tg.requireTool('task_creator'), (req, res) => {
    const run = currentRun(req);
    res.json({ analyzed: true, tasks: run.offers('task_creator') ? 'created' : 'skipped', tools: run.tools, routing_key: run.routingKey });
  });
  host.use(t.tg.errorHandler());
});

afterAll(() => t.close());

describe('when the gate tool is offered to the run', () => {
  test('then the route runs, and an offered enhancement is reported as used', async () => {
    const res = await request(host).post(`/triage/${open}`).send({ from: 'jane@acme.com' }).expect(200);
    expect(res.body).toEqual({ analyzed: true, tasks: 'created', tools: ['email_analyzer', 'task_creator'], routing_key: 'jane@acme.com' });
  });
});

describe('when the gate tool is not offered to the run', () => {
  test('then the request is refused 403 tool_forbidden, saying the gate did not admit this sender (the legacy sentence is for the legacy routes)', async () => {
    const res = await request(host).post(`/triage/${gated}`).send({ from: 'jane@acme.com' }).expect(403);
    expect(res.body).toMatchObject({
      code: 'tool_forbidden',
      tool: 'email_analyzer',
      detail: expect.stringMatching(/^email_analyzer is not offered to this run: its gate admits listed senders only/),
    });
  });

  test('then the refusal is recorded as denied, with the routing key', async () => {
    const rows = await t.sequelize.query<{ tool_id: string; status: string; routing_key: string }>(
      'SELECT tool_id, status, routing_key FROM tool_calls WHERE agent_id = :gated ORDER BY id DESC LIMIT 1',
      { replacements: { gated }, type: QueryTypes.SELECT },
    );
    expect(rows).toEqual([{ tool_id: 'email_analyzer', status: 'denied', routing_key: 'jane@acme.com' }]);
  });

  test('then a message with no parseable sender is refused by a gated attachment', async () => {
    await request(host).post(`/triage/${gated}`).send({ from: 'not an address' }).expect(403);
    await request(host).post(`/triage/${gated}`).send({}).expect(403);
  });
});

describe('when an enhancement tool is not offered', () => {
  test('then requireTool never refuses and the route degrades', async () => {
    const res = await request(host).post(`/triage/${gated}`).send({ from: 'mara@thescoop.com' }).expect(200);
    expect(res.body).toMatchObject({ analyzed: true, tasks: 'skipped', tools: ['email_analyzer'] });
  });
});

describe('when the agent in the path does not exist', () => {
  test('then the answer is 404 not_found, never a grant', async () => {
    const res = await request(host).post('/triage/999999').send({ from: 'mara@thescoop.com' }).expect(404);
    expect(res.body.code).toBe('not_found');
  });
});

describe('when requireTool is misconfigured', () => {
  test('then an unknown tool id throws at construction, with a suggestion', () => {
    expect(() => t.tg.requireTool('email_analyser')).toThrow(ToolgateConfigError);
    expect(() => t.tg.requireTool('email_analyser')).toThrow(/did you mean "email_analyzer"/);
  });

  test('then a bad agent parameter name throws at construction', () => {
    expect(() => t.tg.toolRun({ agentParam: 'not a name' })).toThrow(ToolgateConfigError);
  });
});
