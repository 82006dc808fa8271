// ToolRun, the one dispatch path, with its dependencies faked in memory (test/support/fake-run.ts):
// the records it writes, in order, and what runs. The policy is the real compiled one, from plain
// data; nothing touches a database, so each behaviour here is the dispatch path's own.
import { ApprovalRequiredError, CapExceededError, SenderForbiddenError, ToolForbiddenError, ValidationError } from '../../src/errors';
import { attachment, fakes, runOf } from '../support/fake-run';

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
    await expect(call).rejects.toMatchObject({ issues: [expect.objectContaining({ loc: ['body', 'order'] })] });
    expect(events).toEqual([]);
  });

  test('then a started record that cannot be written stops the tool: the error is thrown and nothing runs', async () => {
    const { deps, events } = fakes({ start: async () => Promise.reject(new Error('database gone')) });
    await expect(
      runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps).callTool('lookup_order', { order: 'SCP-1' }),
    ).rejects.toThrow('database gone');
    expect(events.filter((e) => e.kind === 'ran')).toEqual([]);
  });

  test("then an outcome that cannot be written is still the caller's, and the failure to write it is told", async () => {
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
    const run = runOf(
      { attachments: [attachment(1, ['lookup_order'], { caps: [{ tool_id: null, per: 'agent', limit: 1, window_s: 60 }] })] },
      deps,
    );
    await expect(run.callTool('lookup_order', { order: 'SCP-1' })).rejects.toBeInstanceOf(CapExceededError);
    expect(events.filter((e) => e.kind === 'ran')).toEqual([]);
  });
});

describe("when the agent's access rules refuse the sender", () => {
  test('then refuseSender writes one denied record naming the rule and returns the 403 to raise', async () => {
    const { deps, events } = fakes();
    const run = runOf(
      { access_rules: [{ id: 3, kind: 'deny', pattern: '*@thescoop.com' }], attachments: [attachment(1, ['lookup_order'])] },
      deps,
    );
    expect(await run.refuseSender()).toBeInstanceOf(SenderForbiddenError);
    expect(events).toEqual([{ kind: 'record', detail: { tool_id: 'agent_access_rules', status: 'denied' } }]);
  });
});

describe('when a caller makes a call through the one door (call)', () => {
  test('then a tool not offered is a refused step holding the 403, with one denied record', async () => {
    const { deps, events } = fakes();
    const step = await runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps).call('issue_refund', { order: 'SCP-1' });
    expect(step.status).toBe('refused');
    expect(step.status === 'refused' && step.error).toBeInstanceOf(ToolForbiddenError);
    expect(events).toEqual([{ kind: 'record', detail: { tool_id: 'issue_refund', status: 'denied' } }]);
  });

  test('then a tool outside the list the caller was shown is refused and recorded, though the run offers it', async () => {
    const { deps, events } = fakes();
    const run = runOf({ attachments: [attachment(1, ['lookup_order', 'check_stock'])] }, deps);
    const step = await run.call('check_stock', { order: 'SCP-1' }, { among: ['lookup_order'] });
    expect(step.status).toBe('refused');
    expect(events).toEqual([{ kind: 'record', detail: { tool_id: 'check_stock', status: 'denied' } }]);
  });

  test('then an input the tool refuses is an invalid step holding the 422 at the caller’s location, and nothing is written', async () => {
    const { deps, events } = fakes();
    const step = await runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps).call(
      'lookup_order',
      { order: '' },
      { inputAt: ['body', 'input'] },
    );
    expect(step.status).toBe('invalid');
    expect(step.status === 'invalid' && step.error).toMatchObject({
      issues: [expect.objectContaining({ loc: ['body', 'input', 'order'] })],
    });
    expect(events).toEqual([]);
  });

  test('then a call with no room in its cap is an over_cap step holding the 429, with its denied record', async () => {
    const { deps, events } = fakes({ start: async () => null });
    const cap = { tool_id: 'lookup_order', per: 'sender' as const, limit: 1, window_s: 3_600 };
    const step = await runOf({ attachments: [attachment(1, ['lookup_order'], { caps: [cap] })] }, deps).call('lookup_order', {
      order: 'A',
    });
    expect(step.status).toBe('over_cap');
    expect(step.status === 'over_cap' && step.error).toBeInstanceOf(CapExceededError);
    // The start (faked here to find no room) wrote nothing; the refusal is the one record.
    expect(events).toEqual([{ kind: 'record', detail: { tool_id: 'lookup_order', status: 'denied' } }]);
  });

  test('then a tool offered with no implementation here is a not_dispatchable step, and nothing is written', async () => {
    const { deps, events } = fakes({ implementation: () => undefined });
    const step = await runOf({ attachments: [attachment(1, ['lookup_order'])] }, deps).call('lookup_order', { order: 'A' });
    expect(step.status).toBe('not_dispatchable');
    expect(events).toEqual([]);
  });

  test('then callTool, for a host route, throws the error of a step that ran nothing', async () => {
    const { deps } = fakes({ start: async () => null });
    const cap = { tool_id: 'lookup_order', per: 'sender' as const, limit: 1, window_s: 3_600 };
    const run = runOf({ attachments: [attachment(1, ['lookup_order'], { caps: [cap] })] }, deps);
    await expect(run.callTool('lookup_order', { order: 'A' })).rejects.toBeInstanceOf(CapExceededError);
  });
});
