// The id `agent_access_rules` is reserved for toolgate's own record of a sender refused by an
// agent's access rules (SEMANTICS §9): a caller or a host naming it as a tool gets the usual refusal
// (403 tool_forbidden) or configuration error, and never writes a record under it.
import express from 'express';
import request from 'supertest';
import { QueryTypes } from 'sequelize';
import { currentRun } from '../../middleware/current-run';
import { createTestApp, type TestApp } from '../support/app';
import { createSundae, type Sundae } from '../support/scoop';

let t: TestApp;
let sundae: Sundae;
let host: express.Express;
let ran = 0;

beforeAll(async () => {
  t = await createTestApp();
  sundae = await createSundae(t, 'gate');
  await t.admin().post(`/api/agents/${sundae.id}/access-rules`).send({ kind: 'deny', pattern: 'intern@thescoop.com' }).expect(201);
  host = express();
  host.use(express.json());
  // A host's own route that names the reserved id in code, as dispatch(), skip() or refuse().
  host.post('/steps/:id/:step', t.tg.toolRun(), async (req, res) => {
    const run = currentRun(req);
    try {
      if (req.params.step === 'dispatch') await run.dispatch('agent_access_rules', () => (ran += 1));
      else if (req.params.step === 'skip') await run.skip('agent_access_rules');
      else throw await run.refuse('agent_access_rules');
      res.json({ ok: true });
    } catch (err) {
      const e = err as { name: string; code?: string; status?: number };
      res.status(e.status ?? 500).json({ name: e.name, code: e.code });
    }
  });
  host.use(t.tg.errorHandler());
});
afterAll(() => t.close());

async function recordsUnderReservedId(): Promise<{ status: string; error: string | null }[]> {
  return t.sequelize.query<{ status: string; error: string | null }>(
    "SELECT status, error FROM tool_calls WHERE agent_id = :agent AND tool_id = 'agent_access_rules' ORDER BY id",
    {
      replacements: { agent: sundae.id },
      type: QueryTypes.SELECT,
    },
  );
}

test('when a caller dispatches the tool agent_access_rules, then it is refused 403 tool_forbidden and nothing is recorded under the id', async () => {
  const res = await t
    .client()
    .post(`/api/agents/${sundae.id}/tool-calls`)
    .send({ tool: 'agent_access_rules', sender: 'mara@thescoop.com' })
    .expect(403);
  expect(res.body).toMatchObject({ code: 'tool_forbidden', tool: 'agent_access_rules' });
  expect(await recordsUnderReservedId()).toEqual([]);
});

test.each(['dispatch', 'skip'])(
  'when a host calls run.%s with the id agent_access_rules, then it is a configuration error, nothing runs and nothing is recorded',
  async (step) => {
    const res = await request(host).post(`/steps/${sundae.id}/${step}`).send({ from: 'mara@thescoop.com' }).expect(500);
    expect(res.body).toEqual({ name: 'ToolgateConfigError', code: 'ERR_TOOLGATE_RESERVED_TOOL_ID' });
    expect(ran).toBe(0);
    expect(await recordsUnderReservedId()).toEqual([]);
  },
);

test('when a host refuses the id agent_access_rules, then it is the usual 403 tool_forbidden, with no record under the id', async () => {
  const res = await request(host).post(`/steps/${sundae.id}/refuse`).send({ from: 'mara@thescoop.com' }).expect(403);
  expect(res.body).toEqual({ name: 'ToolForbiddenError', code: 'tool_forbidden' });
  expect(await recordsUnderReservedId()).toEqual([]);
});

test("when the agent's access rules refuse a sender, then that refusal is still the one record under agent_access_rules", async () => {
  await t
    .client()
    .post(`/api/agents/${sundae.id}/tool-calls`)
    .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'intern@thescoop.com' })
    .expect(403);
  expect(await recordsUnderReservedId()).toEqual([
    { status: 'denied', error: "refused by the agent's access rules: deny_rule (deny intern@thescoop.com)" },
  ]);
});
