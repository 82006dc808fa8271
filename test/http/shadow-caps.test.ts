// A candidate's caps counted in the shadow (SEMANTICS §15): each call the live terms let run is
// counted against the candidate's caps in counters of its own, and the call past a cap is marked
// `cap_exceeded` while it runs as the live terms decide. The live counts never see these; setting
// the candidate again or dropping it leaves no count behind; promoting it keeps what ran counted.
import { QueryTypes } from 'sequelize';
import { createSecondInstance, createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface CallRecord {
  id: number;
  tool_id: string;
  status: string;
  routing_key: string | null;
  shadow?: { attachment_id: number; would_be: string; reason: string };
}
interface Gated {
  agent: number;
  attachment: number;
}

let made = 0;

/** An agent holding one open Support toolkit (lookup_order, check_flavor_stock), with no live cap. */
async function supportAgent(): Promise<Gated> {
  made += 1;
  const kit = await makeToolkit(t, `Shadow caps ${made}`, ['lookup_order', 'check_flavor_stock']);
  const agent = await makeAgent(t, { name: `Shadow caps ${made}`, toolkit_ids: [] });
  const attachment = (await t.admin().post(`/api/agents/${agent}/toolkits`).send({ toolkit_id: kit, rules: [] }).expect(201)).body
    .id as number;
  return { agent, attachment };
}

const candidatePath = (g: Gated) => `/api/agents/${g.agent}/toolkits/${g.attachment}/candidate`;
const perSender = (limit: number) => ({ caps: [{ tool_id: 'lookup_order', per: 'sender', limit, window: '1d' }] });
const lookup = (g: Gated, sender: string, on: Pick<TestApp, 'client'> = t) =>
  on
    .client()
    .post(`/api/agents/${g.agent}/tool-calls`)
    .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender });
const calls = async (g: Gated, sender: string): Promise<CallRecord[]> =>
  ((await t.admin().get(`/api/agents/${g.agent}/tool-calls?limit=100`).expect(200)).body as CallRecord[])
    .filter((c) => c.routing_key === sender)
    .sort((a, b) => a.id - b.id);
const OVER = (g: Gated) => ({ attachment_id: g.attachment, would_be: 'denied', reason: 'cap_exceeded' });

/** The attachment's counters: the live ones (`<id>|…`) and the shadow's (`shadow:<id>@…`), with the calls each holds. */
async function counters(g: Gated): Promise<{ live: number; shadow: number; shadowHits: number }> {
  const [row] = await t.sequelize.query<{ live: string; shadow: string; shadow_hits: string }>(
    `SELECT (SELECT count(*) FROM cap_usage WHERE cap_key LIKE :live) AS live,
            (SELECT count(*) FROM cap_usage WHERE cap_key LIKE :shadow) AS shadow,
            (SELECT count(*) FROM cap_hits h JOIN cap_usage u ON u.id = h.usage_id WHERE u.cap_key LIKE :shadow) AS shadow_hits`,
    { replacements: { live: `${g.attachment}|%`, shadow: `shadow:${g.attachment}@%` }, type: QueryTypes.SELECT },
  );
  return { live: Number(row?.live), shadow: Number(row?.shadow), shadowHits: Number(row?.shadow_hits) };
}

describe('when a candidate caps lookup_order at 1 a day per sender on live traffic with no live cap', () => {
  let g: Gated;

  beforeAll(async () => {
    g = await supportAgent();
    await t.admin().put(candidatePath(g)).send(perSender(1)).expect(200);
    await lookup(g, 'jane@acme.com').expect(200);
    await lookup(g, 'jane@acme.com').expect(200);
    await lookup(g, 'omar@acme.com').expect(200);
  });

  test("then a sender's second call runs and its record says the candidate would refuse it over the cap, and the first is unmarked", async () => {
    const jane = await calls(g, 'jane@acme.com');
    expect(jane.map((c) => c.status)).toEqual(['success', 'success']);
    expect(jane[0]?.shadow).toBeUndefined();
    expect(jane[1]?.shadow).toEqual(OVER(g));
  });

  test("then another sender's first call is unmarked", async () => {
    const omar = await calls(g, 'omar@acme.com');
    expect(omar).toHaveLength(1);
    expect(omar[0]).toMatchObject({ status: 'success' });
    expect(omar[0]?.shadow).toBeUndefined();
  });

  test('then the live counts are unchanged: no live counter, and the explanation shows the tool uncapped', async () => {
    expect(await counters(g)).toEqual({ live: 0, shadow: 2, shadowHits: 3 });
    const explained = (
      await t
        .admin()
        .get(`/api/agents/${g.agent}/tools?sender=${encodeURIComponent('jane@acme.com')}`)
        .expect(200)
    ).body;
    expect(explained.capped).toEqual([]);
    expect(explained.attachments[0].caps).toEqual([]);
  });

  test('then a tool the candidate does not cap is not counted nor marked', async () => {
    const stock = () =>
      t
        .client()
        .post(`/api/agents/${g.agent}/tool-calls`)
        .send({ tool: 'check_flavor_stock', input: { flavor: 'Mint Chip' }, sender: 'mara@thescoop.com' })
        .expect(200);
    await stock();
    await stock();
    expect((await calls(g, 'mara@thescoop.com')).map((c) => c.shadow)).toEqual([undefined, undefined]);
    expect((await counters(g)).shadow).toBe(2);
  });

  test('then the shadow so far counts the call over the cap among the calls it would decide otherwise', async () => {
    const summary = (await t.admin().get(candidatePath(g)).expect(200)).body.shadow;
    expect(summary).toMatchObject({ calls_changed: 1, over_cap: 1 });
    expect(summary.calls).toEqual([
      expect.objectContaining({
        tool_id: 'lookup_order',
        routing_key: 'jane@acme.com',
        status: 'success',
        would_be: 'denied',
        reason: 'cap_exceeded',
      }),
    ]);
  });
});

describe('when ten calls of one sender come at once, on two instances, under a candidate cap of 3 a day', () => {
  let b: Awaited<ReturnType<typeof createSecondInstance>>;

  beforeAll(async () => {
    b = await createSecondInstance(t);
  });
  afterAll(() => b.close());

  test('then all ten run, and exactly the seven past the cap are marked', async () => {
    const g = await supportAgent();
    await t.admin().put(candidatePath(g)).send(perSender(3)).expect(200);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => lookup(g, 'jane@acme.com', i % 2 === 0 ? t : b)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const jane = await calls(g, 'jane@acme.com');
    expect(jane.map((c) => c.status)).toEqual(Array(10).fill('success'));
    expect(jane.filter((c) => c.shadow === undefined)).toHaveLength(3);
    expect(jane.filter((c) => c.shadow !== undefined).map((c) => c.shadow)).toEqual(Array(7).fill(OVER(g)));
    expect(await counters(g)).toEqual({ live: 0, shadow: 1, shadowHits: 10 });
  });
});

describe('when the candidate is dropped', () => {
  test('then no candidate count is left behind, and later calls are neither counted nor marked', async () => {
    const g = await supportAgent();
    await t.admin().put(candidatePath(g)).send(perSender(1)).expect(200);
    await lookup(g, 'jane@acme.com').expect(200);
    await lookup(g, 'jane@acme.com').expect(200);
    expect((await counters(g)).shadowHits).toBe(2);

    await t.admin().delete(candidatePath(g)).expect(204);
    expect(await counters(g)).toEqual({ live: 0, shadow: 0, shadowHits: 0 });
    await lookup(g, 'jane@acme.com').expect(200);
    expect((await calls(g, 'jane@acme.com')).at(-1)?.shadow).toBeUndefined();
    expect(await counters(g)).toEqual({ live: 0, shadow: 0, shadowHits: 0 });
  });
});

describe('when the attachment that carries the candidate is detached', () => {
  test('then no candidate count is left behind', async () => {
    const g = await supportAgent();
    await t.admin().put(candidatePath(g)).send(perSender(1)).expect(200);
    await lookup(g, 'jane@acme.com').expect(200);
    expect((await counters(g)).shadowHits).toBe(1);
    await t.admin().delete(`/api/agents/${g.agent}/toolkits/${g.attachment}`).expect(204);
    expect(await counters(g)).toEqual({ live: 0, shadow: 0, shadowHits: 0 });
  });
});

describe('when the candidate is set again', () => {
  test('then its caps count afresh: the first call after it is unmarked', async () => {
    const g = await supportAgent();
    await t.admin().put(candidatePath(g)).send(perSender(1)).expect(200);
    await lookup(g, 'jane@acme.com').expect(200);
    await t.admin().put(candidatePath(g)).send(perSender(1)).expect(200);
    expect((await counters(g)).shadow).toBe(0);
    await lookup(g, 'jane@acme.com').expect(200);
    await lookup(g, 'jane@acme.com').expect(200);
    expect((await calls(g, 'jane@acme.com')).map((c) => c.shadow)).toEqual([undefined, undefined, OVER(g)]);
  });
});

describe('when a candidate cap of 2 a day per sender is promoted', () => {
  let g: Gated;

  beforeAll(async () => {
    g = await supportAgent();
    await t.admin().put(candidatePath(g)).send(perSender(2)).expect(200);
    for (let i = 0; i < 3; i++) await lookup(g, 'jane@acme.com').expect(200);
    await lookup(g, 'omar@acme.com').expect(200);
    const promoted = await t
      .admin()
      .post(`${candidatePath(g)}/promote`)
      .expect(200);
    expect(promoted.body.caps).toEqual([{ tool_id: 'lookup_order', per: 'sender', limit: 2, window: '1d' }]);
  });

  test('then the live count starts at the calls that ran: a sender who made three is refused at once', async () => {
    const refused = await lookup(g, 'jane@acme.com').expect(403);
    expect(refused.body.code).toBe('cap_exceeded');
  });

  test('then a sender who made one has one left', async () => {
    const explained = (
      await t
        .admin()
        .get(`/api/agents/${g.agent}/tools?sender=${encodeURIComponent('omar@acme.com')}`)
        .expect(200)
    ).body;
    expect(explained.attachments[0].caps[0].remaining).toBe(1);
    await lookup(g, 'omar@acme.com').expect(200);
    expect((await lookup(g, 'omar@acme.com').expect(403)).body.code).toBe('cap_exceeded');
  });

  test("then no candidate counter is left, and the live counters hold the candidate's calls", async () => {
    const now = await counters(g);
    expect(now.shadow).toBe(0);
    expect(now.live).toBe(2);
  });
});
