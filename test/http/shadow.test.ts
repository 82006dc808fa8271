// Shadow (SEMANTICS §15): candidate terms on an attachment, tried on live traffic. Runs are offered
// and decided by the live terms only; where the candidate decides otherwise the run and call records
// say so; promoting makes it the live terms on every instance; dropping it leaves no trace on runs.
import { once } from 'node:events';
import { ListenedPolicies, type Invalidation } from '../../src/run/listened-policies';
import { internalsOf, type Toolgate } from '../../src/toolgate';
import { createSecondInstance, createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface Step {
  tool: string;
  status: string;
}
interface RunAnswer {
  tools_offered: string[];
  steps: Step[];
  stopped: string;
}
interface StoredRun {
  id: number;
  routing_key: string | null;
  tools_offered: string[];
  shadow?: { attachment_id: number; adds: string[]; removes: string[] };
}
interface CallRecord {
  id: number;
  tool_id: string;
  status: string;
  routing_key: string | null;
  shadow?: { attachment_id: number; would_be: string; reason: string };
}

let made = 0;

/** An agent holding one Support toolkit (lookup_order, check_flavor_stock) on these rules; the agent's and attachment's ids. */
async function supportAgent(rules: { kind: 'allow' | 'deny'; pattern: string }[] = []): Promise<{ agent: number; attachment: number }> {
  made += 1;
  const kit = await makeToolkit(t, `Shadow support ${made}`, ['lookup_order', 'check_flavor_stock']);
  const agent = await makeAgent(t, { name: `Shadow ${made}`, toolkit_ids: [] });
  const attachment = (await t.admin().post(`/api/agents/${agent}/toolkits`).send({ toolkit_id: kit, rules }).expect(201)).body.id as number;
  return { agent, attachment };
}

let messages = 0;
const message = async (agent: number, from: string): Promise<RunAnswer> => {
  messages += 1;
  return (
    await t
      .client()
      .post(`/api/agents/${agent}/messages`)
      .send({ message: { from, subject: 'Order', body: 'Where is my order SCP-1042?', message_id: `<shadow-${messages}@acme.com>` } })
      .expect(200)
  ).body;
};
const call = (agent: number, tool: string, sender: string, on: Pick<TestApp, 'client'> = t) =>
  on.client().post(`/api/agents/${agent}/tool-calls`).send({ tool, input: INPUTS[tool], sender });
const INPUTS: Record<string, unknown> = { lookup_order: { order_id: 'SCP-1042' }, check_flavor_stock: { flavor: 'Mint Chip' } };
const latestRun = async (agent: number): Promise<StoredRun> => (await t.admin().get(`/api/agents/${agent}/runs`).expect(200)).body[0];
const latestCall = async (agent: number): Promise<CallRecord> =>
  (await t.admin().get(`/api/agents/${agent}/tool-calls?limit=1`).expect(200)).body[0];
const candidatePath = (g: { agent: number; attachment: number }) => `/api/agents/${g.agent}/toolkits/${g.attachment}/candidate`;

describe('when a candidate denies *@acme.com on an open attachment, on live traffic', () => {
  let g: { agent: number; attachment: number };
  let before: RunAnswer;
  let after: RunAnswer;

  beforeAll(async () => {
    g = await supportAgent();
    before = await message(g.agent, 'Jane <jane@acme.com>');
    const set = await t
      .admin()
      .put(candidatePath(g))
      .send({ rules: [{ kind: 'deny', pattern: '*@ACME.com' }] })
      .expect(200);
    expect(set.body.candidate).toMatchObject({ rules: [{ kind: 'deny', pattern: '*@acme.com' }] });
    expect(set.body.rules).toEqual([]);
    after = await message(g.agent, 'Jane <jane@acme.com>');
  });

  test('then a run is offered the same tools and its steps end as they did before', () => {
    expect(after.tools_offered).toEqual(before.tools_offered);
    expect(after.tools_offered).toEqual(['check_flavor_stock', 'lookup_order']);
    expect(after.steps.map((s) => [s.tool, s.status])).toEqual(before.steps.map((s) => [s.tool, s.status]));
    expect(after.stopped).toBe(before.stopped);
  });

  test("then the run's own call of a tool ran, and its record says the candidate would have refused it", async () => {
    expect(after.steps).toContainEqual(expect.objectContaining({ tool: 'lookup_order', status: 'success' }));
    const record = await latestCall(g.agent);
    expect(record).toMatchObject({ tool_id: 'lookup_order', status: 'success', routing_key: 'jane@acme.com' });
    expect(record.shadow).toEqual({ attachment_id: g.attachment, would_be: 'denied', reason: 'deny_rule' });
  });

  test("then the run's record says the candidate would remove both tools", async () => {
    const run = await latestRun(g.agent);
    expect(run.tools_offered).toEqual(['check_flavor_stock', 'lookup_order']);
    expect(run.shadow).toEqual({ attachment_id: g.attachment, adds: [], removes: ['check_flavor_stock', 'lookup_order'] });
  });

  test('then a call the candidate would refuse still runs, and its record says it would be denied by the deny rule', async () => {
    const res = await call(g.agent, 'lookup_order', 'jane@acme.com').expect(200);
    expect(res.body.status).toBe('success');
    const record = await latestCall(g.agent);
    expect(record).toMatchObject({ tool_id: 'lookup_order', status: 'success', routing_key: 'jane@acme.com' });
    expect(record.shadow).toEqual({ attachment_id: g.attachment, would_be: 'denied', reason: 'deny_rule' });
  });

  test('then a call from a sender the candidate also admits carries no shadow', async () => {
    await call(g.agent, 'lookup_order', 'mara@thescoop.com').expect(200);
    const record = await latestCall(g.agent);
    expect(record.routing_key).toBe('mara@thescoop.com');
    expect(record.shadow).toBeUndefined();
  });

  test("then the explain view still offers the live terms' tools", async () => {
    const res = await t
      .admin()
      .get(`/api/agents/${g.agent}/tools?sender=${encodeURIComponent('jane@acme.com')}`)
      .expect(200);
    expect(res.body.tools).toEqual(['check_flavor_stock', 'lookup_order']);
  });
});

describe('when a candidate would open an allow-listed attachment to every sender', () => {
  let g: { agent: number; attachment: number };

  beforeAll(async () => {
    g = await supportAgent([{ kind: 'allow', pattern: '*@thescoop.com' }]);
    await t.admin().put(candidatePath(g)).send({ rules: [] }).expect(200);
  });

  test('then a sender it would admit is still refused, and the record says the call would be admitted', async () => {
    const res = await call(g.agent, 'lookup_order', 'jane@acme.com').expect(403);
    expect(res.body.code).toBe('tool_forbidden');
    const record = await latestCall(g.agent);
    expect(record).toMatchObject({ tool_id: 'lookup_order', status: 'denied' });
    expect(record.shadow).toEqual({ attachment_id: g.attachment, would_be: 'admitted', reason: 'no_rules' });
  });

  test('then a run is offered nothing more, and its record says what the candidate would add', async () => {
    const answer = await message(g.agent, 'jane@acme.com');
    expect(answer.tools_offered).toEqual([]);
    const run = await latestRun(g.agent);
    expect(run.tools_offered).toEqual([]);
    expect(run.shadow).toEqual({ attachment_id: g.attachment, adds: ['check_flavor_stock', 'lookup_order'], removes: [] });
  });
});

describe('when a candidate would allow scheduled runs that the live terms keep out', () => {
  test('then a scheduled run is offered nothing more, and its record says what the candidate would add', async () => {
    const g = await supportAgent();
    await t.admin().put(candidatePath(g)).send({ allow_proactive: true }).expect(200);
    const answer = (await t.scheduler().post(`/api/agents/${g.agent}/runs`).send({ instruction: 'Check the stock.' }).expect(200)).body;
    expect(answer.tools_offered).toEqual([]);
    expect(await latestRun(g.agent)).toMatchObject({
      routing_key: null,
      tools_offered: [],
      shadow: { attachment_id: g.attachment, adds: ['check_flavor_stock', 'lookup_order'], removes: [] },
    });
    const summary = (await t.admin().get(candidatePath(g)).expect(200)).body.shadow;
    expect(summary.gaining).toEqual([{ routing_key: null, run: 'scheduled', tools: ['check_flavor_stock', 'lookup_order'], runs: 1 }]);
  });
});

describe('when the candidate and its shadow so far are read', () => {
  test('then the counts say how many runs were seen, how many differ, who would gain or lose which tools, and which calls changed', async () => {
    const g = await supportAgent([{ kind: 'deny', pattern: 'spam@acme.com' }]);
    await t
      .admin()
      .put(candidatePath(g))
      .send({ rules: [{ kind: 'deny', pattern: '*@acme.com' }] })
      .expect(200);
    await message(g.agent, 'jane@acme.com');
    await message(g.agent, 'jane@acme.com');
    await message(g.agent, 'mara@thescoop.com');
    await call(g.agent, 'check_flavor_stock', 'omar@acme.com').expect(200);

    const res = await t.admin().get(candidatePath(g)).expect(200);
    expect(res.body.candidate).toMatchObject({ rules: [{ kind: 'deny', pattern: '*@acme.com' }] });
    expect(res.body.rules).toMatchObject([{ kind: 'deny', pattern: 'spam@acme.com' }]);
    expect(res.body.shadow).toMatchObject({
      runs: 3,
      differing_runs: 2,
      gaining: [],
      losing: [{ routing_key: 'jane@acme.com', run: 'sender', tools: ['check_flavor_stock', 'lookup_order'], runs: 2 }],
    });
    // Jane's runs' own calls (if the model made any) are changed too; Omar's direct call is the newest.
    expect(res.body.shadow.calls_changed).toBeGreaterThanOrEqual(1);
    expect(res.body.shadow.calls[0]).toMatchObject({
      tool_id: 'check_flavor_stock',
      routing_key: 'omar@acme.com',
      status: 'success',
      would_be: 'denied',
      reason: 'deny_rule',
    });
  });

  test('then an attachment with no candidate answers 404 no_candidate, and one of another agent 404 not_found', async () => {
    const g = await supportAgent();
    const none = await t.admin().get(candidatePath(g)).expect(404);
    expect(none.body.code).toBe('no_candidate');
    const other = await supportAgent();
    const wrong = await t.admin().get(`/api/agents/${other.agent}/toolkits/${g.attachment}/candidate`).expect(404);
    expect(wrong.body.code).toBe('not_found');
  });

  test('then a candidate with a malformed pattern or a cap on an unknown tool is a 422 and nothing is set', async () => {
    const g = await supportAgent();
    const bad = await t
      .admin()
      .put(candidatePath(g))
      .send({ rules: [{ kind: 'deny', pattern: '*thescoop.com' }] })
      .expect(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'rules', 0, 'pattern']);
    const cap = await t
      .admin()
      .put(candidatePath(g))
      .send({ caps: [{ tool_id: 'lookup_ordr', per: 'sender', limit: 1, window: '1d' }] })
      .expect(422);
    expect(cap.body.detail[0].msg).toMatch(/did you mean lookup_order/);
    await t.admin().get(candidatePath(g)).expect(404);
  });
});

describe('when a candidate is dropped', () => {
  test('then it is gone, the live terms stay, and later runs and calls carry no shadow', async () => {
    const g = await supportAgent();
    await t
      .admin()
      .put(candidatePath(g))
      .send({ rules: [{ kind: 'deny', pattern: '*@acme.com' }] })
      .expect(200);
    await t.admin().delete(candidatePath(g)).expect(204);

    const attachment = await t.admin().get(`/api/agents/${g.agent}/toolkits/${g.attachment}`).expect(200);
    expect(attachment.body.candidate).toBeUndefined();
    expect(attachment.body.rules).toEqual([]);
    expect((await t.admin().get(candidatePath(g)).expect(404)).body.code).toBe('no_candidate');
    await call(g.agent, 'lookup_order', 'jane@acme.com').expect(200);
    expect((await latestCall(g.agent)).shadow).toBeUndefined();
    await message(g.agent, 'jane@acme.com');
    expect((await latestRun(g.agent)).shadow).toBeUndefined();
  });

  test('then dropping it again, or promoting it, is a 404 no_candidate', async () => {
    const g = await supportAgent();
    expect((await t.admin().delete(candidatePath(g)).expect(404)).body.code).toBe('no_candidate');
    expect(
      (
        await t
          .admin()
          .post(`${candidatePath(g)}/promote`)
          .expect(404)
      ).body.code,
    ).toBe('no_candidate');
  });
});

function listened(tg: Toolgate): ListenedPolicies {
  const policies = internalsOf(tg).runs.policies;
  if (!(policies instanceof ListenedPolicies)) throw new Error('this instance does not run in listen mode');
  return policies;
}

/** Resolves when this instance has dropped the agent on a notification (or dropped everything). */
function invalidationOf(tg: Toolgate, agentId: number): Promise<Invalidation> {
  return new Promise((resolve) => {
    const policies = listened(tg);
    const seen = (i: Invalidation) => {
      if (i.source === 'notification_all' || (i.source === 'notification' && i.agentIds?.includes(agentId))) {
        policies.off('invalidated', seen);
        resolve(i);
      }
    };
    policies.on('invalidated', seen);
  });
}

describe('when a candidate is promoted on one instance while a second instance serves the agent', () => {
  let b: Awaited<ReturnType<typeof createSecondInstance>>;

  beforeAll(async () => {
    b = await createSecondInstance(t);
  });
  afterAll(() => b.close());

  test('then the second instance decides by it once the change reaches it, and the attachment holds it as its live terms', async () => {
    const g = await supportAgent();
    const policies = listened(b.tg);
    policies.start();
    if (policies.listenerState !== 'listening') await once(policies, 'listening');
    await t
      .admin()
      .put(candidatePath(g))
      .send({ rules: [{ kind: 'deny', pattern: '*@acme.com' }] })
      .expect(200);
    // B serves the agent with the candidate in its cache: still granted, and marked.
    for (let round = 0; round < 20; round++) {
      await call(g.agent, 'lookup_order', 'jane@acme.com', b).expect(200);
      if ((await internalsOf(b.tg).runs.policy(g.agent)).cache === 'hit') break;
    }
    expect((await latestCall(g.agent)).shadow).toMatchObject({ would_be: 'denied' });

    const told = invalidationOf(b.tg, g.agent);
    const promoted = await t
      .admin()
      .post(`${candidatePath(g)}/promote`)
      .expect(200);
    const returned = performance.now();
    expect(promoted.body.rules).toMatchObject([{ kind: 'deny', pattern: '*@acme.com' }]);
    expect(promoted.body.candidate).toBeUndefined();
    await told;
    // The revocation bound in listen mode: refused on B once the notification has arrived.
    expect(performance.now() - returned).toBeLessThan(5_000);

    const refused = await call(g.agent, 'lookup_order', 'jane@acme.com', b);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('tool_forbidden');
    const record = await latestCall(g.agent);
    expect(record).toMatchObject({ status: 'denied', routing_key: 'jane@acme.com' });
    expect(record.shadow).toBeUndefined();
    await call(g.agent, 'lookup_order', 'mara@thescoop.com', b).expect(200);
  });
});
