// The sweeper and the drain (SEMANTICS §13), on a real PostgreSQL: what a dead instance left
// `started` past its deadline becomes `interrupted`, its open runs end `interrupted`, nothing of a
// live instance's is touched, and a redelivery of an interrupted run's message runs nothing; on
// shutdown, new requests are refused while those in flight end.
import { QueryTypes } from 'sequelize';
import { z } from 'zod';
import { SCOOP_TOOLS } from '../../src/app/demo/scoop-tools';
import { Instances } from '../../src/db/instances';
import { Sweeper } from '../../src/run/sweeper';
import { defineTool } from '../../src/tools/tool-registry';
import { createTestApp, type TestApp } from '../support/app';
import { createSundae, type Sundae } from '../support/scoop';
import { makeToolkit } from '../support/factories';

let release: () => void = () => undefined;
let entered: Promise<void> = Promise.resolve();
const slow = defineTool({
  id: 'slow_lookup',
  display_name: 'Slow lookup',
  summary: 'Looks something up, slowly.',
  input: z.strictObject({}),
  async execute() {
    await new Promise<void>((resolve) => {
      release = resolve;
      enteredNow();
    });
    return { found: true };
  },
});
let enteredNow: () => void = () => undefined;
const holdNext = () => {
  entered = new Promise((resolve) => (enteredNow = resolve));
};

let t: TestApp;
let sundae: Sundae;
let me: Instances;
let sweeper: Sweeper;
const mine = { records: [] as number[], runs: [] as number[] };

beforeAll(async () => {
  t = await createTestApp({ tools: [...SCOOP_TOOLS, slow] });
  sundae = await createSundae(t, 'gate');
  const kit = await makeToolkit(t, 'Slow', ['slow_lookup']);
  await t.admin().post(`/api/agents/${sundae.id}/toolkits`).send({ toolkit_id: kit }).expect(201);
  me = new Instances(t.sequelize, { heartbeatMs: 60_000, staleAfterMs: 30_000 });
  await me.register();
  sweeper = new Sweeper(t.sequelize, me, {
    intervalMs: 60_000,
    graceMs: 1_000,
    inFlight: { records: () => mine.records, runs: () => mine.runs },
  });
  await t.sequelize.query(`INSERT INTO toolgate_instances (id, heartbeat_at) VALUES ('dead', now() - interval '1 hour'), ('alive', now())`);
});
afterAll(async () => {
  await me.stop();
  await t.close();
});

const record = async (instance: string, deadline: string) =>
  (
    await t.sequelize.query<{ id: string }>(
      `INSERT INTO tool_calls (agent_id, tool_id, tool_name, status, run, routing_key, instance_id, deadline_at)
       VALUES (:agent, 'process_refund', 'process_refund', 'started', 'sender', 'mara@thescoop.com', :instance, now() + :deadline::interval) RETURNING id`,
      { replacements: { agent: sundae.id, instance, deadline }, type: QueryTypes.SELECT },
    )
  )[0]!.id;
const statusOf = async (id: string | number) =>
  (
    await t.sequelize.query<{ status: string; error: string | null }>('SELECT status, error FROM tool_calls WHERE id = :id', {
      replacements: { id },
      type: QueryTypes.SELECT,
    })
  )[0];

describe('when the sweeper runs', () => {
  test("then a dead instance's started record past its deadline becomes interrupted, and one before it, or a live instance's, stays started", async () => {
    const due = await record('dead', '-1 second');
    const early = await record('dead', '1 hour');
    const living = await record('alive', '-1 second');
    const result = await sweeper.sweep();
    expect(result.records).toBe(1);
    expect(await statusOf(due)).toEqual({ status: 'interrupted', error: expect.stringMatching(/outcome is unknown.*not run again/) });
    expect((await statusOf(early))?.status).toBe('started');
    expect((await statusOf(living))?.status).toBe('started');
    // A second sweep, from this instance or another, changes nothing more.
    expect((await sweeper.sweep()).records).toBe(0);
  });

  test("then this instance's own started record past its deadline becomes interrupted only once it no longer runs it", async () => {
    const own = await record(me.id, '-1 second');
    mine.records = [Number(own)];
    await sweeper.sweep();
    expect((await statusOf(own))?.status).toBe('started');
    mine.records = [];
    await sweeper.sweep();
    expect((await statusOf(own))?.status).toBe('interrupted');
  });

  test("then a dead instance's open run ends interrupted, and a redelivery of its message gets that answer and runs nothing", async () => {
    const jane = (
      await t
        .client()
        .post(`/api/agents/${sundae.id}/messages`)
        .send({ message: { from: 'jane@acme.com', message_id: '<j-open@acme.com>', body: 'Order SCP-1042 arrived melted.' } })
        .expect(200)
    ).body;
    // As if its instance had died mid-run: the run is open again, and held by the dead instance.
    await t.sequelize.query(
      `UPDATE agent_runs SET completed_at = NULL, stopped = NULL, answer = NULL, instance_id = 'dead', created_at = now() - interval '1 minute' WHERE id = :id`,
      {
        replacements: { id: jane.run_id },
      },
    );
    const before = (await t.sequelize.query('SELECT id FROM tool_calls', { type: QueryTypes.SELECT })).length;
    const duringSweep = await t
      .client()
      .post(`/api/agents/${sundae.id}/messages`)
      .send({ message: { from: 'jane@acme.com', message_id: '<j-open@acme.com>', body: 'Order SCP-1042 arrived melted.' } })
      .expect(200);
    expect(duringSweep.body).toMatchObject({
      run_id: jane.run_id,
      stopped: 'interrupted',
      error: expect.stringMatching(/nothing is run again/),
    });
    expect((await sweeper.sweep()).runs).toBe(1);
    const [run] = await t.sequelize.query<{ stopped: string; completed_at: Date | null }>(
      'SELECT stopped, completed_at FROM agent_runs WHERE id = :id',
      { replacements: { id: jane.run_id }, type: QueryTypes.SELECT },
    );
    expect(run).toMatchObject({ stopped: 'interrupted', completed_at: expect.any(Date) });
    expect((await t.sequelize.query('SELECT id FROM tool_calls', { type: QueryTypes.SELECT })).length).toBe(before);
  });

  test('then idempotency keys past their time are deleted', async () => {
    await t.sequelize.query(
      `INSERT INTO idempotency_keys (scope, key, request_hash, state, instance_id, expires_at) VALUES ('s', 'old', repeat('0', 64), 'done', 'dead', now() - interval '1 second')`,
    );
    expect((await sweeper.sweep()).keys).toBe(1);
  });

  test('then an instance not heard from for a day is forgotten, and a live one is kept', async () => {
    await t.sequelize.query(`INSERT INTO toolgate_instances (id, heartbeat_at) VALUES ('inst_long_gone', now() - interval '2 days')`);
    await me.register();
    expect((await sweeper.sweep()).instances).toBe(1);
    const left = await t.sequelize.query<{ id: string }>(`SELECT id FROM toolgate_instances WHERE id IN ('inst_long_gone', :me)`, {
      replacements: { me: me.id },
      type: QueryTypes.SELECT,
    });
    expect(left.map((r) => r.id)).toEqual([me.id]);
  });

  test('then a cap counter every call of which has left its window is dropped with its calls, and one with a call inside stays', async () => {
    await t.sequelize.query(`
      WITH c AS (INSERT INTO cap_usage (cap_key, window_s, used, last_at) VALUES
        ('sweep|old', 86400, 2, now() - interval '2 days'), ('sweep|live', 86400, 1, now() - interval '1 hour') RETURNING id, last_at)
      INSERT INTO cap_hits (usage_id, at) SELECT id, last_at FROM c UNION ALL SELECT id, last_at - interval '1 minute' FROM c WHERE last_at < now() - interval '1 day'`);
    expect((await sweeper.sweep()).caps).toBe(1);
    const left = await t.sequelize.query<{ cap_key: string; held: string }>(
      `SELECT cap_key, (SELECT count(*) FROM cap_hits h WHERE h.usage_id = u.id) AS held FROM cap_usage u WHERE cap_key LIKE 'sweep|%'`,
      { type: QueryTypes.SELECT },
    );
    expect(left.map((r) => ({ ...r, held: Number(r.held) }))).toEqual([{ cap_key: 'sweep|live', held: 1 }]);
    expect(
      await t.sequelize.query(`SELECT 1 FROM cap_hits WHERE usage_id NOT IN (SELECT id FROM cap_usage)`, { type: QueryTypes.SELECT }),
    ).toEqual([]);
  });
});

describe('when the toolgate drains for a shutdown', () => {
  test('then a request in flight ends and is answered, a new one is refused with 503 shutting_down, and the drain says it drained', async () => {
    holdNext();
    const inFlight = t
      .client()
      .post(`/api/agents/${sundae.id}/tool-calls`)
      .send({ tool: 'slow_lookup', input: {}, sender: 'jane@acme.com' })
      .then((r) => r);
    await entered;
    const drained = t.tg.drain(10_000);
    const refused = await t
      .client()
      .post(`/api/agents/${sundae.id}/tool-calls`)
      .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' })
      .expect(503);
    expect(refused.body.code).toBe('shutting_down');
    release();
    expect((await inFlight).body).toEqual({ tool: 'slow_lookup', status: 'success', output: { found: true } });
    expect(await drained).toEqual({ drained: true, left: 0 });
  });
});
