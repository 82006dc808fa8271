// ToolRun, the one dispatch path, with its dependencies faked in memory: the records it writes, in
// order, and what runs. The policy is the real compiled one, from plain data; nothing touches a
// database, so each behaviour here is the dispatch path's own.
import { z } from 'zod';
import type { ApprovalRequestView, NewApprovalRequest } from '../../src/core/approval-request';
import { compilePolicy } from '../../src/core/compiled-policy';
import type { AgentPolicyData, AttachmentPolicy } from '../../src/core/types';
import { ApprovalRequiredError, CapExceededError, SenderForbiddenError, ToolForbiddenError, ValidationError } from '../../src/errors';
import { ToolRun, type DispatchRun, type ToolRunDeps } from '../../src/run/tool-run';
import type { ToolCallOutcome, ToolCallRecord } from '../../src/services/tool-calls';
import type { ToolImplementation } from '../../src/tools/tool-registry';

const AGENT = { id: 7, name: 'Support', system_prompt: null, escalation_address: null };
const MARA: DispatchRun = { kind: 'sender', routing_key: 'mara@thescoop.com' };
const LIVE = new Set(['lookup_order', 'issue_refund', 'check_stock']);

/** One attachment, admitting `allow` patterns; `approvers` makes its members requested, not run. */
function attachment(id: number, members: string[], extra: Partial<AttachmentPolicy> = {}): AttachmentPolicy {
  return { attachment_id: id, toolkit_id: id, toolkit_name: `Kit ${id}`, allow_proactive: false, member_tool_ids: members, rules: [{ id: id * 10, kind: 'allow', pattern: '*@thescoop.com' }], ...extra };
}

type Event = { kind: 'record' | 'start' | 'complete' | 'file' | 'ran'; detail: unknown };

/** In-memory dependencies that log every call in order. */
function fakes(overrides: Partial<ToolRunDeps> = {}) {
  const events: Event[] = [];
  let nextId = 100;
  const tool = (id: string): ToolImplementation => ({
    id,
    input: z.strictObject({ order: z.string().min(1) }),
    execute: (input) => {
      events.push({ kind: 'ran', detail: { id, input } });
      if (input.order === 'explode') throw new Error('the order system is down');
      return { found: input.order };
    },
  });
  const deps: ToolRunDeps = {
    legacyName: (id) => id,
    implementation: (id) => (LIVE.has(id) ? tool(id) : undefined),
    toolContext: { sequelize: undefined as never },
    record: async (r: ToolCallRecord) => void events.push({ kind: 'record', detail: { tool_id: r.tool_id, status: r.status } }),
    start: async (r, caps) => {
      events.push({ kind: 'start', detail: { tool_id: r.tool_id, capped: caps !== null } });
      return (nextId += 1);
    },
    complete: async (id: number, outcome: ToolCallOutcome) => void events.push({ kind: 'complete', detail: { id, status: outcome.status, error: outcome.error } }),
    onRecordError: (err) => events.push({ kind: 'complete', detail: { failedToWrite: (err as Error).message } }),
    onFault: () => undefined,
    fileApproval: async (request: NewApprovalRequest) => {
      events.push({ kind: 'file', detail: { tool: request.tool_id, attachment: request.attachment_id, input: request.input } });
      return { request: { id: 1, tool: request.tool_id } as unknown as ApprovalRequestView, created: true };
    },
    claimApproval: async () => null,
    approvalExpiryMs: 60_000,
    ...overrides,
  };
  return { deps, events };
}

function runOf(data: Omit<AgentPolicyData, 'agent_id'>, deps: ToolRunDeps, run: DispatchRun = MARA): ToolRun {
  return new ToolRun(AGENT, run, compilePolicy({ agent_id: AGENT.id, ...data }, LIVE), deps);
}

describe('when a run calls a tool it is offered', () => {
  test('then it writes the started record, runs the tool once, and completes the record as a success', async () => {
    const { deps, events } = fakes();
    const outcome = await runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps).callTool('lookup_order', { order: 'SCP-1' });
    expect(outcome).toEqual({ status: 'success', output: { found: 'SCP-1' } });
    expect(events.map((e) => e.kind)).toEqual(['start', 'ran', 'complete']);
    expect(events[2]!.detail).toMatchObject({ id: 101, status: 'success', error: null });
  });

  test('then a tool that throws is a failure outcome with its words, recorded as such, not an exception', async () => {
    const { deps, events } = fakes();
    const outcome = await runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps).callTool('lookup_order', { order: 'explode' });
    expect(outcome).toMatchObject({ status: 'failure', error: 'the order system is down' });
    expect(events.at(-1)!.detail).toMatchObject({ status: 'failure', error: 'the order system is down' });
  });

  test('then an input the tool refuses is a 422 naming the field, and nothing is written or run', async () => {
    const { deps, events } = fakes();
    const call = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps).callTool('lookup_order', { order: '' });
    await expect(call).rejects.toBeInstanceOf(ValidationError);
    await expect(call).rejects.toMatchObject({ issues: [expect.objectContaining({ loc: ['body', 'input', 'order'] })] });
    expect(events).toEqual([]);
  });

  test('then a started record that cannot be written stops the tool: the error is thrown and nothing runs', async () => {
    const { deps, events } = fakes({ start: async () => Promise.reject(new Error('database gone')) });
    await expect(runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps).callTool('lookup_order', { order: 'SCP-1' })).rejects.toThrow('database gone');
    expect(events.filter((e) => e.kind === 'ran')).toEqual([]);
  });

  test('then an outcome that cannot be written is still the caller\'s, and the failure to write it is told', async () => {
    const { deps, events } = fakes({ complete: async () => Promise.reject(new Error('lost the connection')) });
    const outcome = await runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps).callTool('lookup_order', { order: 'SCP-1' });
    expect(outcome).toEqual({ status: 'success', output: { found: 'SCP-1' } });
    expect(events.at(-1)!.detail).toEqual({ failedToWrite: 'lost the connection' });
  });
});

describe('when a run calls a tool it is not offered', () => {
  test('then it is refused with one denied record naming the tool, and the tool never runs', async () => {
    const { deps, events } = fakes();
    const call = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps).callTool('issue_refund', { order: 'SCP-1' });
    await expect(call).rejects.toBeInstanceOf(ToolForbiddenError);
    expect(events).toEqual([{ kind: 'record', detail: { tool_id: 'issue_refund', status: 'denied' } }]);
  });

  test('then a sender no gate admits is refused for a tool the run would otherwise hold', async () => {
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps, { kind: 'sender', routing_key: 'jane@acme.com' });
    expect(run.tools).toEqual([]);
    await expect(run.execute('lookup_order', () => 'ran')).rejects.toBeInstanceOf(ToolForbiddenError);
    expect(events.map((e) => e.kind)).toEqual(['record']);
  });
});

describe('when a run may only request a tool (an attachment with approvers)', () => {
  test('then a call by name is filed as an approval request with its exact input, and nothing runs', async () => {
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['issue_refund'], { approvers: ['boss@thescoop.com'] })] }, deps);
    expect(run.needsApproval('issue_refund')).toBe(true);
    const outcome = await run.callTool('issue_refund', { order: 'SCP-9' });
    expect(outcome).toMatchObject({ status: 'pending_approval', created: true });
    expect(events).toEqual([{ kind: 'file', detail: { tool: 'issue_refund', attachment: 1, input: { order: 'SCP-9' } } }]);
  });

  test('then code that runs it at once is refused, since a call that runs now cannot be filed', async () => {
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['issue_refund'], { approvers: [] })] }, deps);
    await expect(run.execute('issue_refund', () => 'ran')).rejects.toBeInstanceOf(ApprovalRequiredError);
    expect(events.map((e) => e.detail)).toEqual([{ tool_id: 'issue_refund', status: 'denied' }]);
  });
});

describe('when a capped tool has no room left', () => {
  test('then the claim made with its started record fails, it is refused as capped, and nothing runs', async () => {
    const { deps, events } = fakes({ start: async () => null });
    const run = runOf({ attachments: [attachment(1, ['lookup_order'], { caps: [{ tool_id: null, per: 'agent', limit: 1, window_s: 60 }] })] }, deps);
    await expect(run.callTool('lookup_order', { order: 'SCP-1' })).rejects.toBeInstanceOf(CapExceededError);
    expect(events.filter((e) => e.kind === 'ran')).toEqual([]);
  });
});

describe("when the agent's access rules refuse the sender", () => {
  test('then refuseSender writes one denied record naming the rule and returns the 403 to raise', async () => {
    const { deps, events } = fakes();
    const run = runOf({ access_rules: [{ id: 3, kind: 'deny', pattern: '*@thescoop.com' }], attachments: [attachment(1, ['lookup_order'])] }, deps);
    expect(await run.refuseSender()).toBeInstanceOf(SenderForbiddenError);
    expect(events).toEqual([{ kind: 'record', detail: { tool_id: 'agent_access_rules', status: 'denied' } }]);
  });
});
