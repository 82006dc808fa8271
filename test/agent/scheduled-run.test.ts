// A scheduled run (SEMANTICS §5, §10): Scout's morning stock report, with no sender in sight, draws
// only on the attachments that allow scheduled runs, and is the scheduler's to start.
import { QueryTypes } from 'sequelize';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;
let scout: number;

beforeAll(async () => {
  t = await createTestApp();
  const finance = await makeToolkit(t, 'Finance', ['process_refund']);
  const operations = await makeToolkit(t, 'Operations', ['check_flavor_stock', 'send_email']);
  scout = await makeAgent(t, { name: 'Scout', toolkit_ids: [finance] });
  await t.admin().post(`/api/agents/${scout}/toolkits`).send({ toolkit_id: operations, allow_proactive: true }).expect(201);
  await t.admin().post(`/api/agents/${scout}/access-rules`).send({ kind: 'allow', pattern: '*@thescoop.com' }).expect(201);
});

afterAll(() => t.close());

const INSTRUCTION = 'Send the morning stock report to mara@thescoop.com.';

describe('when the scheduler starts the morning stock report', () => {
  let body: {
    run: string;
    routing_key: null;
    tools_offered: string[];
    steps: { tool: string; status: string; input: Record<string, unknown> }[];
    stopped: string;
    reply: { text: string };
    thread_id?: number;
  };

  beforeAll(async () => {
    body = (await t.scheduler().post(`/api/agents/${scout}/runs`).send({ instruction: INSTRUCTION }).expect(200)).body;
  });

  test('then the run is offered only what allows scheduled runs, with no sender and no thread', () => {
    expect(body).toMatchObject({
      run: 'scheduled',
      routing_key: null,
      tools_offered: ['check_flavor_stock', 'send_email'],
      stopped: 'reply',
    });
    expect(body.thread_id).toBeUndefined();
  });

  test('then it checks the stock, then sends the report to the address in the instruction', async () => {
    expect(body.steps.map((s) => [s.tool, s.status])).toEqual([
      ['check_flavor_stock', 'success'],
      ['send_email', 'success'],
    ]);
    expect(body.steps[1]?.input).toMatchObject({ to: 'mara@thescoop.com', subject: 'Morning stock report' });
    const [mail] = await t.sequelize.query<{ recipient: string; body: string }>(
      'SELECT recipient, body FROM scoop_outbox ORDER BY id DESC LIMIT 1',
      { type: QueryTypes.SELECT },
    );
    expect(mail?.recipient).toBe('mara@thescoop.com');
    expect(mail?.body).toMatch(/Mint Chip: 14 pints/);
  });

  test('then the run is listed for operators, with its instruction', async () => {
    const runs = await t.admin().get(`/api/agents/${scout}/runs`).expect(200);
    expect(runs.body[0]).toMatchObject({ run: 'scheduled', thread_id: null, message: { instruction: INSTRUCTION }, stopped: 'reply' });
  });
});

describe('when the wrong role asks', () => {
  test("then a client token may not start a scheduled run, and the scheduler may not send a sender's message", async () => {
    await t.client().post(`/api/agents/${scout}/runs`).send({ instruction: INSTRUCTION }).expect(403);
    const res = await t
      .scheduler()
      .post(`/api/agents/${scout}/messages`)
      .send({ message: { from: 'mara@thescoop.com', body: 'hi' } })
      .expect(403);
    expect(res.body.code).toBe('forbidden');
  });
});
