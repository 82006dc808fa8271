// Exactly once (SEMANTICS §13), as a mail relay and a retrying caller try it: a redelivered message
// gets its first handling's answer and runs nothing; an Idempotency-Key replays its answer, refuses
// another body, and says when the first is still running; two instances receiving the same message,
// or the same key, at once run it once.
import { Client } from 'pg';
import { QueryTypes } from 'sequelize';
import { z } from 'zod';
import { SCOOP_TOOLS } from '../../src/app/demo/scoop-tools';
import { defineTool } from '../../src/tools/tool-registry';
import { ADMIN_TOKEN, CLIENT_TOKEN, createSecondInstance, createTestApp, type TestApp } from '../support/app';
import { createSundae, type Sundae } from '../support/scoop';
import { makeAgent, makeToolkit } from '../support/factories';

/** A tool that runs until the test lets it finish: a request caught mid-tool. */
let release: () => void = () => undefined;
let entered: Promise<void> = Promise.resolve();
let enter: () => void = () => undefined;
function holdNextCall(): void {
  entered = new Promise((resolve) => (enter = resolve));
}
/** A tool that says which call it is: an outside service's idempotency key. */
const seenCallIds: number[] = [];
const chargeCard = defineTool({
  id: 'charge_card',
  display_name: 'Charge card',
  summary: 'Charges a card through an outside service.',
  input: z.strictObject({ cents: z.number().int() }),
  execute({ cents }, context) {
    seenCallIds.push(context.call_id);
    return { charged: cents, idempotency_key: `toolgate-${context.call_id}` };
  },
});

const slowLookup = defineTool({
  id: 'slow_lookup',
  display_name: 'Slow lookup',
  summary: 'Looks something up, slowly.',
  input: z.strictObject({ what: z.string() }),
  async execute({ what }) {
    enter();
    await new Promise<void>((resolve) => (release = resolve));
    return { found: what };
  },
});

let t: TestApp;
let sundae: Sundae;

beforeAll(async () => {
  t = await createTestApp({ tools: [...SCOOP_TOOLS, slowLookup, chargeCard] });
  sundae = await createSundae(t, 'gate');
  const slow = await makeToolkit(t, 'Slow', ['slow_lookup', 'charge_card']);
  await t.admin().post(`/api/agents/${sundae.id}/toolkits`).send({ toolkit_id: slow }).expect(201);
});
afterAll(() => t.close());

const refunds = async () =>
  (await t.sequelize.query<{ order_id: string }>('SELECT order_id FROM scoop_refunds ORDER BY id', { type: QueryTypes.SELECT })).map(
    (r) => r.order_id,
  );
const resetOrders = () =>
  t.sequelize.query("DELETE FROM scoop_refunds; UPDATE scoop_orders SET status = 'delivered' WHERE id IN ('SCP-1042', 'SCP-1043')");
const count = async (sql: string, replacements: Record<string, unknown> = {}) =>
  Number((await t.sequelize.query<{ n: string }>(sql, { replacements, type: QueryTypes.SELECT }))[0]!.n);
const post = (body: Record<string, unknown>) => t.client().post(`/api/agents/${sundae.id}/messages`).send(body);

describe("when Mara's approval is delivered three times", () => {
  test('then process_refund runs once, and the second and third answers equal the first, marked replayed', async () => {
    await resetOrders();
    const jane = (
      await post({
        message: {
          from: 'Jane <jane@acme.com>',
          message_id: '<jane-1@acme.com>',
          body: 'Order SCP-1042 arrived melted. I would like a refund.',
        },
      }).expect(200)
    ).body;
    const mara = {
      thread_id: jane.thread_id,
      message: { from: 'Mara <Mara+billing@TheScoop.com>', message_id: '<mara-1@thescoop.com>', body: 'Approved, process it.' },
    };
    const first = await post(mara).expect(200);
    const second = await post(mara).expect(200);
    const third = await post(mara).expect(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect([second.headers['idempotent-replayed'], third.headers['idempotent-replayed']]).toEqual(['true', 'true']);
    // The same answer to the byte, its keys in their order, not only an equal object.
    expect(second.text).toBe(first.text);
    expect(third.text).toBe(first.text);
    expect(await refunds()).toEqual(['SCP-1042']);
    expect(await count("SELECT count(*) AS n FROM tool_calls WHERE agent_id = :a AND tool_id = 'process_refund'", { a: sundae.id })).toBe(
      1,
    );
    expect(
      await count("SELECT count(*) AS n FROM agent_runs WHERE agent_id = :a AND routing_key = 'mara@thescoop.com'", { a: sundae.id }),
    ).toBe(1);
  });

  test("then the same Message-ID from another sender, with other content, or naming one of the agent's replies is a 422 that runs nothing", async () => {
    const jane = (
      await post({ message: { from: 'jane@acme.com', message_id: '<jane-2@acme.com>', body: 'Where is SCP-1043?' } }).expect(200)
    ).body;
    const runs = await count('SELECT count(*) AS n FROM agent_runs');
    const other = await post({ message: { from: 'omar@example.org', message_id: '<jane-2@acme.com>', body: 'Where is SCP-1043?' } }).expect(
      422,
    );
    expect(other.body.code).toBe('message_id_reused');
    expect(JSON.stringify(other.body)).not.toMatch(/SCP-1043|Salted/);
    await post({ message: { from: 'jane@acme.com', message_id: '<jane-2@acme.com>', body: 'Something else entirely.' } }).expect(422);
    await post({ message: { from: 'jane@acme.com', message_id: jane.reply.message_id, body: 'Where is SCP-1043?' } }).expect(422);
    expect(await count('SELECT count(*) AS n FROM agent_runs')).toBe(runs);
  });
});

describe('when a request is retried while its first attempt still runs a tool', () => {
  test('then the retry is a 409 that starts nothing, and once the first ends the next retry gets its answer', async () => {
    holdNextCall();
    const first = t
      .client()
      .post(`/api/agents/${sundae.id}/tool-calls`)
      .set('Idempotency-Key', 'slow-key-1')
      .send({ tool: 'slow_lookup', input: { what: 'SCP-1042' }, sender: 'jane@acme.com' });
    const pending = first.then((r) => r);
    await entered;
    const during = await t
      .client()
      .post(`/api/agents/${sundae.id}/tool-calls`)
      .set('Idempotency-Key', 'slow-key-1')
      .send({ tool: 'slow_lookup', input: { what: 'SCP-1042' }, sender: 'jane@acme.com' })
      .expect(409);
    expect(during.body.code).toBe('idempotency_key_in_flight');
    release();
    const done = await pending;
    expect(done.body).toEqual({ tool: 'slow_lookup', status: 'success', output: { found: 'SCP-1042' } });
    const after = await t
      .client()
      .post(`/api/agents/${sundae.id}/tool-calls`)
      .set('Idempotency-Key', 'slow-key-1')
      .send({ tool: 'slow_lookup', input: { what: 'SCP-1042' }, sender: 'jane@acme.com' })
      .expect(200);
    expect(after.body).toEqual(done.body);
    expect(after.headers['idempotent-replayed']).toBe('true');
    expect(await count("SELECT count(*) AS n FROM tool_calls WHERE tool_id = 'slow_lookup'")).toBe(1);
  });
});

describe('an Idempotency-Key', () => {
  const dispatch = (key: string, order: string, token = CLIENT_TOKEN) =>
    t
      .client()
      .post(`/api/agents/${sundae.id}/tool-calls`)
      .set('Authorization', `Bearer ${token}`)
      .set('Idempotency-Key', key)
      .send({ tool: 'process_refund', input: { order_id: order }, sender: 'mara@thescoop.com' });

  test.each([
    ['the same key and body', 'k-same', 'SCP-1042', 200, true],
    ['the same key with another body', 'k-other', 'SCP-1043', 422, false],
  ])('with %s, the retry answers %s and runs nothing', async (_case, key, retryOrder, status, replayed) => {
    await resetOrders();
    const first = await dispatch(key, 'SCP-1042').expect(200);
    const retry = await dispatch(key, retryOrder).expect(status);
    if (replayed) {
      expect(retry.text).toBe(first.text);
      expect(retry.headers['idempotent-replayed']).toBe('true');
    } else {
      expect(retry.body.code).toBe('idempotency_key_reused');
    }
    expect(await refunds()).toEqual(['SCP-1042']);
  });

  test('past its time (24 hours at least), the same key runs anew', async () => {
    await resetOrders();
    await dispatch('k-expired', 'SCP-1042').expect(200);
    await t.sequelize.query("UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = 'k-expired'");
    const again = await dispatch('k-expired', 'SCP-1043').expect(200);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(await refunds()).toEqual(['SCP-1042', 'SCP-1043']);
    const [kept] = await t.sequelize.query<{ hours: number }>(
      "SELECT extract(epoch FROM expires_at - created_at) / 3600 AS hours FROM idempotency_keys WHERE key = 'k-expired'",
      { type: QueryTypes.SELECT },
    );
    expect(Number(kept!.hours)).toBeGreaterThanOrEqual(24);
  });

  test("keeps the answer in the statement that completes the call's record: a new key's call sends three statements, its replay one", async () => {
    await resetOrders();
    const sent: string[] = [];
    const query = Client.prototype.query;
    const counting = function (this: Client, config: unknown, ...rest: unknown[]) {
      const name = (config as { name?: unknown } | null)?.name;
      if (typeof name === 'string' && /^toolgate_(idempotency|tool_call)_/.test(name)) sent.push(name);
      return (query as (...args: unknown[]) => unknown).call(this, config, ...rest);
    };
    Client.prototype.query = counting as typeof query;
    try {
      const first = await dispatch('k-one-statement', 'SCP-1042').expect(200);
      expect(sent).toEqual(['toolgate_idempotency_claim_or_read', 'toolgate_tool_call_insert', 'toolgate_tool_call_complete_keeping']);
      sent.length = 0;
      const retry = await dispatch('k-one-statement', 'SCP-1042').expect(200);
      expect(sent).toEqual(['toolgate_idempotency_claim_or_read']);
      expect(retry.text).toBe(first.text);
    } finally {
      Client.prototype.query = query;
    }
    const [kept] = await t.sequelize.query<{ state: string; status: number }>(
      "SELECT state, status FROM idempotency_keys WHERE key = 'k-one-statement'",
      { type: QueryTypes.SELECT },
    );
    expect(kept).toEqual({ state: 'done', status: 200 });
  });

  test("is the caller's own: another token's request with the same key runs", async () => {
    await resetOrders();
    await dispatch('k-shared', 'SCP-1042').expect(200);
    const admin = await dispatch('k-shared', 'SCP-1043', ADMIN_TOKEN).expect(200);
    expect(admin.headers['idempotent-replayed']).toBeUndefined();
    expect(await refunds()).toEqual(['SCP-1042', 'SCP-1043']);
  });

  test('that is not printable ASCII, or too long, is a 422 naming the header', async () => {
    for (const key of ['x'.repeat(256), 'a key with spaces', 'clé-é']) {
      const res = await t
        .client()
        .post(`/api/agents/${sundae.id}/tool-calls`)
        .set('Idempotency-Key', key)
        .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' } })
        .expect(422);
      expect(res.body.detail[0].loc).toEqual(['header', 'Idempotency-Key']);
    }
  });

  test('on an email analysis files its tasks once: the retry gets the same tasks and files none', async () => {
    const analyst = await makeAgent(t, { name: 'Analyst', enabled_tools: 'email_analyzer,task_creator' });
    const analyze = () =>
      t
        .client()
        .post(`/api/agents/${analyst}/email/analyze`)
        .set('Idempotency-Key', 'k-analyze')
        .send({ from: 'jane@acme.com', subject: 'Melted order', body: 'My order arrived melted. Please refund it by Friday.' });
    const first = await analyze().expect(200);
    expect(first.body.tasks.length).toBeGreaterThan(0);
    const again = await analyze().expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await count('SELECT count(*) AS n FROM tasks WHERE agent_id = :a', { a: analyst })).toBe(first.body.tasks.length);
  });

  test('on a scheduled run replays its answer, with the same status', async () => {
    const run = () =>
      t.scheduler().post(`/api/agents/${sundae.id}/runs`).set('Idempotency-Key', 'k-run').send({ instruction: 'Check the stock.' });
    const first = await run().expect(200);
    const again = await run().expect(200);
    expect(again.body).toEqual(first.body);
    expect(await count("SELECT count(*) AS n FROM agent_runs WHERE run = 'scheduled' AND agent_id = :a", { a: sundae.id })).toBe(1);
  });
});

describe('when a tool calls an outside service', () => {
  test("then it is told its call's record id, a key of its own for that service, and a replay does not call it again", async () => {
    seenCallIds.length = 0;
    const charge = () =>
      t
        .client()
        .post(`/api/agents/${sundae.id}/tool-calls`)
        .set('Idempotency-Key', 'k-charge')
        .send({ tool: 'charge_card', input: { cents: 1899 }, sender: 'jane@acme.com' });
    const first = await charge().expect(200);
    await charge().expect(200);
    const [record] = await t.sequelize.query<{ id: number }>("SELECT id FROM tool_calls WHERE tool_id = 'charge_card' ORDER BY id", {
      type: QueryTypes.SELECT,
    });
    expect(seenCallIds).toEqual([Number(record!.id)]);
    expect(first.body.output.idempotency_key).toBe(`toolgate-${record!.id}`);
  });
});

describe('when two instances receive the same message at once', () => {
  test('then it runs once: one answer is the run, the other its replay or an in-flight 409, and a retry gets the answer', async () => {
    await resetOrders();
    const second = await createSecondInstance(t, { tools: [...SCOOP_TOOLS, slowLookup] });
    try {
      const jane = (
        await post({
          message: {
            from: 'jane@acme.com',
            message_id: '<jane-3@acme.com>',
            body: 'Order SCP-1042 arrived melted. I would like a refund.',
          },
        }).expect(200)
      ).body;
      const mara = {
        thread_id: jane.thread_id,
        message: { from: 'mara@thescoop.com', message_id: '<mara-3@thescoop.com>', body: 'Approved, process it.' },
      };
      const answers = await Promise.all(
        [t, second, t, second].map((instance) => instance.client().post(`/api/agents/${sundae.id}/messages`).send(mara)),
      );
      expect(answers.every((a) => a.status === 200 || (a.status === 409 && a.body.code === 'message_id_in_flight'))).toBe(true);
      const ran = answers.filter((a) => a.status === 200 && a.headers['idempotent-replayed'] === undefined);
      expect(ran).toHaveLength(1);
      expect(await refunds()).toEqual(['SCP-1042']);
      expect(await count("SELECT count(*) AS n FROM agent_runs WHERE message->>'message_id' = '<mara-3@thescoop.com>'")).toBe(1);
      const retry = await second.client().post(`/api/agents/${sundae.id}/messages`).send(mara).expect(200);
      expect(retry.body).toEqual(ran[0]!.body);
    } finally {
      await second.close();
    }
  });

  test('then the same Idempotency-Key sent to both runs once', async () => {
    await resetOrders();
    const second = await createSecondInstance(t, { tools: [...SCOOP_TOOLS, slowLookup] });
    try {
      const send = (instance: Pick<TestApp, 'client'>) =>
        instance
          .client()
          .post(`/api/agents/${sundae.id}/tool-calls`)
          .set('Idempotency-Key', 'k-two-instances')
          .send({ tool: 'process_refund', input: { order_id: 'SCP-1042' }, sender: 'mara@thescoop.com' });
      const before = await count("SELECT count(*) AS n FROM tool_calls WHERE tool_id = 'process_refund'");
      const answers = await Promise.all([send(t), send(second), send(t), send(second)]);
      expect(answers.map((a) => a.status).every((s) => s === 200 || s === 409)).toBe(true);
      // One ran it; any other 200 is its replay.
      expect(answers.filter((a) => a.status === 200 && a.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
      expect(await refunds()).toEqual(['SCP-1042']);
      // The demo refund is idempotent per order: the records, not the refunds, show a second run.
      expect(await count("SELECT count(*) AS n FROM tool_calls WHERE tool_id = 'process_refund'")).toBe(before + 1);
      const retry = await send(second).expect(200);
      expect(retry.headers['idempotent-replayed']).toBe('true');
    } finally {
      await second.close();
    }
  });
});
