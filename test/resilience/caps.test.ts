// Caps (SEMANTICS §13): at most N calls of an attachment's members per window, per agent or per
// sender, counted atomically across instances, refused at dispatch like any refusal, shown in the
// explanation; a cap binds its own attachment, and an approved request counts when it runs.
import { QueryTypes } from 'sequelize';
import { createSecondInstance, createTestApp, type TestApp } from '../support/app';
import { createSundae } from '../support/scoop';
import { makeAgent, makeToolkit } from '../support/factories';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const resetOrders = () =>
  t.sequelize.query(
    "DELETE FROM scoop_refunds; UPDATE scoop_orders SET status = 'delivered' WHERE id IN ('SCP-1042', 'SCP-1043'); UPDATE scoop_orders SET status = 'shipped' WHERE id = 'SCP-1050'",
  );
const records = (agent: number, tool: string) =>
  t.sequelize.query<{ status: string; error: string | null }>(
    'SELECT status, error FROM tool_calls WHERE agent_id = :agent AND tool_id = :tool ORDER BY id',
    {
      replacements: { agent, tool },
      type: QueryTypes.SELECT,
    },
  );
const refund = (agent: number, order: string, sender = 'mara@thescoop.com') =>
  t
    .client()
    .post(`/api/agents/${agent}/tool-calls`)
    .send({ tool: 'process_refund', input: { order_id: order }, sender });

describe('when Finance caps refunds at 2 a day per sender', () => {
  let sundae: number;

  beforeAll(async () => {
    await resetOrders();
    const made = await createSundae(t, 'gate');
    sundae = made.id;
    await t
      .admin()
      .patch(`/api/agents/${sundae}/toolkits/${made.finance}`)
      .send({ caps: [{ tool_id: 'process_refund', per: 'sender', limit: 2, window: '24h' }] })
      .expect(200);
  });

  test('then the attachment shows the cap, its window written back in the largest unit', async () => {
    const attachments = (await t.admin().get(`/api/agents/${sundae}/toolkits`).expect(200)).body as { caps: unknown[] }[];
    expect(attachments.flatMap((a) => a.caps)).toEqual([{ tool_id: 'process_refund', per: 'sender', limit: 2, window: '1d' }]);
  });

  test('then the third call is refused at dispatch with 403 cap_exceeded and a denied record, and nothing ran', async () => {
    await refund(sundae, 'SCP-1042').expect(200);
    await refund(sundae, 'SCP-1043').expect(200);
    const third = await refund(sundae, 'SCP-1050').expect(403);
    expect(third.body).toMatchObject({
      code: 'cap_exceeded',
      tool: 'process_refund',
      detail: expect.stringMatching(/at most 2 calls per sender per 1d/),
    });
    expect((await records(sundae, 'process_refund')).map((r) => r.status)).toEqual(['success', 'success', 'denied']);
    expect((await records(sundae, 'process_refund')).at(-1)?.error).toMatch(/^cap_exceeded: /);
    expect((await t.sequelize.query("SELECT status FROM scoop_orders WHERE id = 'SCP-1050'", { type: QueryTypes.SELECT }))[0]).toEqual({
      status: 'shipped',
    });
  });

  test("then another sender's count is their own", async () => {
    await resetOrders();
    await refund(sundae, 'SCP-1042', 'omar@thescoop.com').expect(200);
  });

  test('then the explanation shows the cap and what remains, for each sender', async () => {
    const mara = (await t.admin().get(`/api/agents/${sundae}/tools?sender=mara@thescoop.com`).expect(200)).body;
    const finance = mara.attachments.find((a: { toolkit_name: string }) => a.toolkit_name.startsWith('Finance'));
    expect(finance.caps).toEqual([{ tool_id: 'process_refund', per: 'sender', limit: 2, window_s: 86_400, remaining: 0 }]);
    expect(mara.capped).toEqual(['process_refund']);
    const omar = (await t.admin().get(`/api/agents/${sundae}/tools?sender=omar@thescoop.com`).expect(200)).body;
    expect(omar.attachments.find((a: { toolkit_name: string }) => a.toolkit_name.startsWith('Finance')).caps[0].remaining).toBe(1);
  });

  test('then in an agent run the call over the cap is a denied step the model reads, and the run goes on', async () => {
    const answer = (
      await t
        .client()
        .post(`/api/agents/${sundae}/messages`)
        .send({ message: { from: 'mara@thescoop.com', body: 'Please refund SCP-1043, approved, process it.' } })
        .expect(200)
    ).body;
    expect(answer.steps[0]).toMatchObject({ tool: 'process_refund', status: 'denied', error: expect.stringMatching(/over its cap/) });
    expect(answer.stopped).toBe('reply');
  });

  test('then another attachment that offers the tool uncapped lets the call run: grants only add', async () => {
    const kit = await makeToolkit(t, 'Refunds for Mara', ['process_refund']);
    await t
      .admin()
      .post(`/api/agents/${sundae}/toolkits`)
      .send({ toolkit_id: kit, rules: [{ kind: 'allow', pattern: 'mara@thescoop.com' }] })
      .expect(201);
    await resetOrders();
    await refund(sundae, 'SCP-1050').expect(200);
    const explained = (await t.admin().get(`/api/agents/${sundae}/tools?sender=mara@thescoop.com`).expect(200)).body;
    expect(explained.capped).not.toContain('process_refund');
    expect(explained.attachments.find((a: { toolkit_name: string }) => a.toolkit_name.startsWith('Finance')).caps).toHaveLength(1);
  });
});

describe("when a sender's calls leave the window", () => {
  test('then the cap has room again, and the counter holds only the calls inside it', async () => {
    await resetOrders();
    const made = await createSundae(t, 'gate', { name: 'Windowed' });
    await t
      .admin()
      .patch(`/api/agents/${made.id}/toolkits/${made.finance}`)
      .send({ caps: [{ tool_id: 'process_refund', per: 'sender', limit: 1, window: '1h' }] })
      .expect(200);
    await refund(made.id, 'SCP-1042').expect(200);
    expect((await refund(made.id, 'SCP-1043').expect(403)).body.code).toBe('cap_exceeded');
    // The first call, moved back past the window's start, as if two hours had passed.
    const key = `%|process_refund|sender|3600|sender:mara@thescoop.com`;
    await t.sequelize.query(
      `UPDATE cap_hits SET at = at - interval '2 hours' WHERE usage_id IN (SELECT id FROM cap_usage WHERE cap_key LIKE :key AND cap_key LIKE :attachment)`,
      {
        replacements: { key, attachment: `${made.finance}|%` },
      },
    );
    await refund(made.id, 'SCP-1043').expect(200);
    const [usage] = await t.sequelize.query<{ used: number; held: string }>(
      `SELECT u.used, (SELECT count(*) FROM cap_hits h WHERE h.usage_id = u.id) AS held FROM cap_usage u WHERE cap_key LIKE :key AND cap_key LIKE :attachment`,
      { replacements: { key, attachment: `${made.finance}|%` }, type: QueryTypes.SELECT },
    );
    expect({ used: Number(usage?.used), held: Number(usage?.held) }).toEqual({ used: 1, held: 1 });
  });
});

describe('when 64 calls of a capped tool arrive at once on two instances', () => {
  test('then no more than the cap run, every other is refused, and the count is exact after', async () => {
    const second = await createSecondInstance(t);
    try {
      // Lookups are this agent's only grant, so every call is capped.
      const made = { id: await makeAgent(t, { name: 'Busy', toolkit_ids: [] }) };
      const kit = await makeToolkit(t, 'Lookups', ['lookup_order']);
      await t
        .admin()
        .post(`/api/agents/${made.id}/toolkits`)
        .send({ toolkit_id: kit, caps: [{ tool_id: null, per: 'agent', limit: 10, window: '1h' }] })
        .expect(201);
      const answers = await Promise.all(
        Array.from({ length: 64 }, (_, i) =>
          (i % 2 === 0 ? t : second)
            .client()
            .post(`/api/agents/${made.id}/tool-calls`)
            .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: `c${i}@acme.com` }),
        ),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(10);
      expect(answers.filter((a) => a.status === 403 && a.body.code === 'cap_exceeded')).toHaveLength(54);
      const statuses = (await records(made.id, 'lookup_order')).map((r) => r.status);
      expect(statuses.filter((s) => s === 'success')).toHaveLength(10);
      expect(statuses.filter((s) => s === 'denied')).toHaveLength(54);
      const [usage] = await t.sequelize.query<{ used: number; held: number }>(
        `SELECT u.used, (SELECT count(*) FROM cap_hits h WHERE h.usage_id = u.id) AS held FROM cap_usage u WHERE cap_key LIKE :key`,
        { replacements: { key: `%|*|agent|3600|agent:${made.id}` }, type: QueryTypes.SELECT },
      );
      expect({ used: Number(usage?.used), held: Number(usage?.held) }).toEqual({ used: 10, held: 10 });
    } finally {
      await second.close();
    }
  });
});

describe('when approval and a cap bind the same attachment', () => {
  test('then an approved request counts when it runs, and approving one over the cap is refused while it stays pending', async () => {
    await resetOrders();
    const made = await createSundae(t, 'approval', { name: 'Careful' });
    await t
      .admin()
      .patch(`/api/agents/${made.id}/toolkits/${made.finance}`)
      .send({ caps: [{ tool_id: 'process_refund', per: 'sender', limit: 1, window: '1d' }] })
      .expect(200);
    const file = async (order: string) => (await refund(made.id, order, 'jane@acme.com').expect(202)).body.approval_request_id as number;
    const [first, second] = [await file('SCP-1042'), await file('SCP-1043')];
    await t.admin().post(`/api/agents/${made.id}/approval-requests/${first}/approve`).expect(200);
    const over = await t.admin().post(`/api/agents/${made.id}/approval-requests/${second}/approve`).expect(403);
    expect(over.body.code).toBe('cap_exceeded');
    expect((await t.admin().get(`/api/agents/${made.id}/approval-requests/${second}`).expect(200)).body.status).toBe('pending');
    expect((await t.sequelize.query('SELECT order_id FROM scoop_refunds', { type: QueryTypes.SELECT })).length).toBe(1);
  });
});

describe('when a cap is written wrong', () => {
  test.each([
    [{ tool_id: 'process_refund', per: 'sender', limit: 3, window: 'a day' }, 'window', /s, m, h or d/],
    [{ tool_id: 'process_refnud', per: 'sender', limit: 3, window: '1d' }, 'tool_id', /did you mean process_refund/],
    [{ tool_id: null, per: 'sender', limit: 0, window: '1d' }, 'limit', /at least one call/],
  ])('then %j is a 422 naming the field', async (cap, field, message) => {
    const made = await createSundae(t, 'gate', { name: 'Wrong' });
    const res = await t
      .admin()
      .patch(`/api/agents/${made.id}/toolkits/${made.finance}`)
      .send({ caps: [cap] })
      .expect(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'caps', 0, field], msg: expect.stringMatching(message) });
  });
  test('then two caps that count the same calls over the same window are a 422 naming the second, and nothing changes', async () => {
    const made = await createSundae(t, 'gate', { name: 'Twice' });
    const caps = [
      { tool_id: 'process_refund', per: 'sender', limit: 3, window: '1d' },
      { tool_id: 'process_refund', per: 'sender', limit: 10, window: '24h' },
    ];
    const res = await t.admin().patch(`/api/agents/${made.id}/toolkits/${made.finance}`).send({ caps }).expect(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'caps', 1], type: 'duplicate_cap' });
    expect((await t.admin().get(`/api/agents/${made.id}/toolkits/${made.finance}`).expect(200)).body.caps).toEqual([]);
  });
});
