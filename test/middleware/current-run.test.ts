// toolRun(): resolves the request's run once, from the path's agent, the body's sender and the
// caller's role, and keeps it for the request; a sender the agent's access rules refuse stops here.
// The run service is faked: it starts a real ToolRun over a compiled policy.
import type { RequestHandler } from 'express';
import { toolRun } from '../../middleware/current-run';
import type { Role } from '../../middleware/request-state';
import type { DispatchRun } from '../../src/run/tool-run';
import type { AgentPolicyData } from '../../src/core/types';
import { attachment, fakes, runOf } from '../support/fake-run';
import { throughMiddleware } from '../support/middleware-harness';

/** A run service over one agent's policy data, remembering what it was asked to start. */
function runs(data: Omit<AgentPolicyData, 'agent_id'> = { attachments: [attachment(1, ['lookup_order'])] }) {
  const { deps, events } = fakes();
  const asked: { agentId: number; run: DispatchRun }[] = [];
  return {
    events,
    asked,
    service: {
      startCached: () => undefined,
      start: async (agentId: number, run: DispatchRun) => {
        asked.push({ agentId, run });
        return runOf(data, deps, run);
      },
    },
  };
}

const as = (role: Role | null) => ({ auth: { role, anonymousClient: false } });
const call = (mw: RequestHandler, body: unknown, role: Role | null = 'client', path = '/agents/7') =>
  throughMiddleware(mw, { route: '/agents/:id', path, body, state: as(role) });

describe('when a client sends a message', () => {
  test('then the run is a sender run for the routing key of `from` (else `sender`), kept for the request', async () => {
    const r = runs();
    const out = await call(toolRun(r.service), { from: 'Mara <Mara@TheScoop.com>', sender: 'other@acme.com' });
    expect(out.passed).toBe(true);
    expect(r.asked).toEqual([{ agentId: 7, run: { kind: 'sender', routing_key: 'mara@thescoop.com' } }]);
    expect(out.state?.run?.tools).toEqual(['lookup_order']);
    await call(toolRun(r.service), { sender: 'jane@acme.com' });
    expect(r.asked[1]!.run).toEqual({ kind: 'sender', routing_key: 'jane@acme.com' });
  });

  test('then an id that is not canonical decimal is a 422 naming the path, and no run starts', async () => {
    const r = runs();
    const out = await call(toolRun(r.service), { sender: 'jane@acme.com' }, 'client', '/agents/007');
    expect(out).toMatchObject({ status: 422, body: { code: 'validation_error', detail: [{ loc: ['path', 'id'] }] } });
    expect(r.asked).toEqual([]);
  });

  test("then a sender the agent's access rules refuse is a 403 sender_forbidden with one denied record, and no run is kept", async () => {
    const r = runs({ access_rules: [{ id: 1, kind: 'deny', pattern: '*@acme.com' }], attachments: [attachment(1, ['lookup_order'])] });
    const out = await call(toolRun(r.service), { sender: 'jane@acme.com' });
    expect(out).toMatchObject({ status: 403, passed: false, body: { code: 'sender_forbidden' } });
    expect(r.events.map((e) => e.detail)).toEqual([{ tool_id: 'agent_access_rules', status: 'denied' }]);
  });
});

describe('when a run is asked to be scheduled', () => {
  test('then the scheduler and the admin start one, and a client is a 403', async () => {
    const r = runs();
    expect((await call(toolRun(r.service), { scheduled: true }, 'scheduler')).passed).toBe(true);
    expect((await call(toolRun(r.service), { scheduled: true }, 'admin')).passed).toBe(true);
    expect(r.asked.map((a) => a.run)).toEqual([{ kind: 'scheduled' }, { kind: 'scheduled' }]);
    expect(await call(toolRun(r.service), { scheduled: true }, 'client')).toMatchObject({ status: 403, body: { code: 'forbidden' } });
  });

  test('then the scheduler sending a sender instead is a 403: its token starts scheduled runs only', async () => {
    const r = runs();
    expect(await call(toolRun(r.service), { sender: 'jane@acme.com' }, 'scheduler')).toMatchObject({
      status: 403,
      body: { code: 'forbidden' },
    });
    expect(r.asked).toEqual([]);
  });
});

describe('when it is mounted wrong', () => {
  test('then a JSON body nobody parsed is a 500 misconfigured naming express.json(), never a run with no sender', async () => {
    const r = runs();
    const out = await throughMiddleware(toolRun(r.service), {
      route: '/agents/:id',
      path: '/agents/7',
      raw: { contentType: 'application/json', text: '{"sender":"jane@acme.com"}' },
      state: as('client'),
    });
    expect(out).toMatchObject({ status: 500, body: { code: 'misconfigured' } });
    expect(String(out.body.detail)).toContain('mount express.json() before toolRun()');
    expect(r.asked).toEqual([]);
  });

  test('then an agentParam that is no parameter name fails at construction with ERR_TOOLGATE_AGENT_PARAM', () => {
    expect(() => toolRun(runs().service, { agentParam: 'agent id' })).toThrow(
      expect.objectContaining({ code: 'ERR_TOOLGATE_AGENT_PARAM' }),
    );
  });
});
