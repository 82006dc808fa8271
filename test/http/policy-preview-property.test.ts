// The preview's verdict on each recorded call is what dispatch decides once the change is made for
// real (SEMANTICS §15): for random policies, random traffic through POST /tool-calls and a random
// change, the calls are recorded, previewed, the change applied through the admin API, the caps'
// counters emptied (a preview counts from the window's start), and the same calls dispatched again.
import fc from 'fast-check';
import { QueryTypes } from 'sequelize';
import { createTestApp, type TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

jest.setTimeout(120_000);

let t: TestApp;

beforeAll(async () => {
  // Every run reads the policy as it stands: the change is in force for the next call at once.
  t = await createTestApp({ policyCache: 'off' });
});

afterAll(() => t.close());

const TOOLS = ['lookup_order', 'check_flavor_stock', 'process_refund', 'send_email'] as const;
type Tool = (typeof TOOLS)[number];
const INPUT: Record<Tool, unknown> = {
  lookup_order: { order_id: 'SCP-1042' },
  check_flavor_stock: {},
  process_refund: { order_id: 'SCP-1050' },
  send_email: { to: 'jane@acme.com', subject: 'Stock', body: 'Stock is fine.' },
};
const SENDERS = ['jane@acme.com', 'mara@thescoop.com', 'ops@thescoop.com', null] as const; // null: a scheduled run
const PATTERNS = ['*@thescoop.com', 'jane@acme.com', '*@acme.com', 'mara@thescoop.com'];

const rule = fc.record({ kind: fc.constantFrom('allow' as const, 'deny' as const), pattern: fc.constantFrom(...PATTERNS) });
const rules = fc.uniqueArray(rule, { maxLength: 2, selector: (r) => `${r.kind} ${r.pattern}` });
const cap = fc.record({
  tool_id: fc.option(fc.constantFrom(...TOOLS), { nil: null }),
  per: fc.constantFrom('agent' as const, 'sender' as const),
  limit: fc.integer({ min: 1, max: 2 }),
  window: fc.constant('1d'),
});
const terms = fc.record(
  {
    rules,
    caps: fc.uniqueArray(cap, { maxLength: 2, selector: (c) => `${c.tool_id}|${c.per}` }),
    approval: fc.option(fc.record({ approvers: fc.subarray(['mara@thescoop.com', '*@thescoop.com']) }), { nil: null }),
    allow_proactive: fc.boolean(),
  },
  { requiredKeys: [] },
);
const members = fc.subarray([...TOOLS], { minLength: 1 });
const traffic = fc.array(fc.record({ sender: fc.constantFrom(...SENDERS), tool: fc.constantFrom(...TOOLS) }), {
  minLength: 1,
  maxLength: 8,
});

/** Three toolkits; the agent holds the first one or two, on random terms. */
const world = fc.record({
  kits: fc.tuple(members, members, members),
  attached: fc.integer({ min: 1, max: 2 }),
  terms: fc.tuple(terms, terms),
  access: rules,
  traffic,
  change: fc.oneof(
    fc.record({ kind: fc.constant('update' as const), which: fc.integer({ min: 0, max: 1 }), terms }),
    fc.record({ kind: fc.constant('detach' as const), which: fc.integer({ min: 0, max: 1 }) }),
    fc.record({ kind: fc.constant('attach' as const), terms }),
    fc.record({ kind: fc.constant('toolkit' as const), which: fc.integer({ min: 0, max: 2 }), members }),
    fc.record({ kind: fc.constant('access_rules' as const), rules }),
  ),
});

type Outcome = 'started' | 'denied' | 'cap_exceeded' | 'pending_approval';

let made = 0;

async function dispatch(agentId: number, call: { sender: string | null; tool: Tool }): Promise<Outcome> {
  const body =
    call.sender === null
      ? { tool: call.tool, input: INPUT[call.tool], scheduled: true }
      : { tool: call.tool, input: INPUT[call.tool], sender: call.sender };
  const res = await (call.sender === null ? t.scheduler() : t.client()).post(`/api/agents/${agentId}/tool-calls`).send(body);
  if (res.status === 200) return 'started';
  if (res.status === 202) return 'pending_approval';
  if (res.status === 403) return res.body.code === 'cap_exceeded' ? 'cap_exceeded' : 'denied';
  throw new Error(`dispatch answered ${res.status}: ${JSON.stringify(res.body)}`);
}

const lastRecord = async (agentId: number) =>
  (
    await t.sequelize.query<{ id: string; tool_id: string }>(
      'SELECT id, tool_id FROM tool_calls WHERE agent_id = :agentId ORDER BY id DESC LIMIT 1',
      {
        replacements: { agentId },
        type: QueryTypes.SELECT,
      },
    )
  )[0];

test('when a change is previewed on random traffic and then made, then every recorded call ends as the preview said', async () => {
  await fc.assert(
    fc.asyncProperty(world, async (w) => {
      made += 1;
      const kits = await Promise.all(w.kits.map((m, i) => makeToolkit(t, `Kit ${made}-${i}`, m)));
      const agentId = await makeAgent(t, { name: `Agent ${made}` });
      const attachments: number[] = [];
      for (let i = 0; i < w.attached; i++) {
        attachments.push(
          (
            await t
              .admin()
              .post(`/api/agents/${agentId}/toolkits`)
              .send({ toolkit_id: kits[i], ...w.terms[i] })
              .expect(201)
          ).body.id as number,
        );
      }
      for (const r of w.access) await t.admin().post(`/api/agents/${agentId}/access-rules`).send(r).expect(201);

      // The traffic, each call's record with what it was asked and how it ended.
      const recorded: { id: number; call: (typeof w.traffic)[number]; outcome: Outcome }[] = [];
      for (const call of w.traffic) {
        const before = await lastRecord(agentId);
        const outcome = await dispatch(agentId, call);
        const after = await lastRecord(agentId);
        if (after && after.id !== before?.id && after.tool_id !== 'agent_access_rules')
          recorded.push({ id: Number(after.id), call, outcome });
      }

      const target = attachments[Math.min('which' in w.change ? w.change.which : 0, attachments.length - 1)]!;
      const change: Record<string, Record<string, unknown>> = w.change.kind === 'update'
        ? { update: { attachment_id: target, ...w.change.terms } }
        : w.change.kind === 'detach'
          ? { detach: { attachment_id: target } }
          : w.change.kind === 'attach'
            ? { attach: { agent_id: agentId, toolkit_id: kits[2], ...w.change.terms } }
            : w.change.kind === 'toolkit'
              ? { toolkit: { toolkit_id: kits[w.change.which], member_tool_ids: w.change.members } }
              : { access_rules: { agent_id: agentId, rules: w.change.rules } };
      const impact = (await t.admin().post('/api/policy/preview').send({ change }).expect(200)).body;
      const changed = new Map<number, { would_be: string; reason: string }>(
        impact.calls.changed.map((c: { call_id: number }) => [c.call_id, c]),
      );
      const expected = recorded.map(({ id, outcome }) => {
        const c = changed.get(id);
        if (!c) return outcome;
        return c.reason === 'cap_exceeded' ? 'cap_exceeded' : (c.would_be as Outcome);
      });

      // The change, made for real.
      const c = w.change;
      if (c.kind === 'update') await t.admin().patch(`/api/agents/${agentId}/toolkits/${target}`).send(c.terms).expect(200);
      if (c.kind === 'detach') await t.admin().delete(`/api/agents/${agentId}/toolkits/${target}`).expect(204);
      if (c.kind === 'attach')
        await t
          .admin()
          .post(`/api/agents/${agentId}/toolkits`)
          .send({ toolkit_id: kits[2], ...c.terms })
          .expect(201);
      if (c.kind === 'toolkit') await t.admin().patch(`/api/toolkits/${kits[c.which]}`).send({ member_tool_ids: c.members }).expect(200);
      if (c.kind === 'access_rules') {
        const live = (await t.admin().get(`/api/agents/${agentId}/access-rules`).expect(200)).body as { id: number }[];
        for (const r of live) await t.admin().delete(`/api/agents/${agentId}/access-rules/${r.id}`).expect(204);
        for (const r of c.rules) await t.admin().post(`/api/agents/${agentId}/access-rules`).send(r).expect(201);
      }
      await t.sequelize.query('DELETE FROM cap_hits; DELETE FROM cap_usage;');

      const actual: Outcome[] = [];
      for (const { call } of recorded) actual.push(await dispatch(agentId, call));
      expect(actual).toEqual(expected);
    }),
    { numRuns: 50 },
  );
});
