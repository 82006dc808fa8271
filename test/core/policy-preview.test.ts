// The preview's pure part (SEMANTICS §15): a change applied to plain policy data, one call replayed
// on a run's offer, caps counted in time order, and the answer's lists held to their limit.
import { applyChange, type PolicyChange } from '../../src/core/policy-change';
import { PolicyPreview, type RecordedCall } from '../../src/core/policy-preview';
import { compilePolicy } from '../../src/core/policy-index';
import type { AgentPolicyData, AttachmentPolicy } from '../../src/core/types';

const LIVE = new Set(['lookup_order', 'check_flavor_stock', 'process_refund', 'send_email']);

const attachment = (id: number, toolkit: number, members: string[], extra: Partial<AttachmentPolicy> = {}): AttachmentPolicy => ({
  attachment_id: id,
  toolkit_id: toolkit,
  toolkit_name: `Kit ${toolkit}`,
  allow_proactive: false,
  member_tool_ids: members,
  rules: [],
  ...extra,
});

const sundae: AgentPolicyData = {
  agent_id: 1,
  attachments: [
    attachment(1, 10, ['lookup_order', 'check_flavor_stock']),
    attachment(2, 11, ['process_refund'], { rules: [{ id: 1, kind: 'allow', pattern: '*@thescoop.com' }] }),
  ],
};

const at = Date.UTC(2026, 11, 3, 9);
const call = (id: number, fields: Partial<RecordedCall> = {}): RecordedCall => ({
  id,
  agent_id: 1,
  tool_id: 'process_refund',
  status: 'success',
  run: 'sender',
  routing_key: 'mara@thescoop.com',
  at: at + id * 1000,
  dispatch: 'call',
  run_key: `run-${id}`,
  ...fields,
});

const previewOf = (data: AgentPolicyData, change: PolicyChange, withheld?: ReadonlySet<string>) =>
  new PolicyPreview(
    new Map([[data.agent_id, { current: compilePolicy(data, LIVE), candidate: compilePolicy(applyChange(data, change), LIVE) }]]),
    withheld,
  );
const window = { from: new Date(at), to: new Date(at + 86_400_000) };

describe('when a change is applied to plain policy data', () => {
  test('then an update replaces only the terms it gives, and the data given is left as it was', () => {
    const changed = applyChange(sundae, { kind: 'update', agent_id: 1, attachment_id: 2, terms: { rules: [] } });
    expect(changed.attachments[1]).toMatchObject({ rules: [], member_tool_ids: ['process_refund'], allow_proactive: false });
    expect(sundae.attachments[1]!.rules).toHaveLength(1);
  });

  test('then an attachment is added after every real one, and a detach removes it', () => {
    const attached = applyChange(sundae, {
      kind: 'attach',
      agent_id: 1,
      toolkit: { toolkit_id: 12, toolkit_name: 'Operations', member_tool_ids: ['send_email'] },
      terms: { allow_proactive: true },
    });
    expect(attached.attachments.map((a) => a.attachment_id)).toEqual([1, 2, 0]);
    expect(attached.attachments[2]).toMatchObject({ allow_proactive: true, rules: [], approvers: null, caps: [] });
    expect(applyChange(sundae, { kind: 'detach', agent_id: 1, attachment_id: 1 }).attachments.map((a) => a.attachment_id)).toEqual([2]);
  });

  test("then a toolkit's members reach every attachment of it, and another agent's change reaches nothing", () => {
    const changed = applyChange(sundae, { kind: 'toolkit', toolkit_id: 11, member_tool_ids: ['process_refund', 'send_email'] });
    expect(changed.attachments[1]!.member_tool_ids).toEqual(['process_refund', 'send_email']);
    expect(applyChange(sundae, { kind: 'access_rules', agent_id: 2, rules: [] })).toBe(sundae);
  });
});

describe('when one call is replayed', () => {
  const needingApproval: PolicyChange = { kind: 'update', agent_id: 1, attachment_id: 2, terms: { approvers: [] } };
  const outcomes = (preview: PolicyPreview) => preview.impact(window).calls.changed.map((c) => [c.call_id, c.would_be, c.reason]);

  test('then a call needing approval is filed, a step is refused and an optional step skipped', () => {
    const preview = previewOf(sundae, needingApproval);
    preview.addCall(call(1, { dispatch: 'call' }));
    preview.addCall(call(2, { dispatch: 'step' }));
    preview.addCall(call(3, { dispatch: 'optional' }));
    expect(outcomes(preview)).toEqual([
      [1, 'pending_approval', 'needs_approval'],
      [2, 'denied', 'needs_approval'],
      [3, 'skipped', 'needs_approval'],
    ]);
  });

  test('then a tool the change leaves alone keeps its outcome, and an access-rules refusal is a run, not a call', () => {
    const preview = previewOf(sundae, needingApproval);
    preview.addCall(call(1, { tool_id: 'lookup_order' }));
    preview.addCall(call(2, { tool_id: 'agent_access_rules', routing_key: 'x@acme.com', status: 'denied' }));
    const impact = preview.impact(window);
    expect(impact.calls.changed).toEqual([]);
    expect([impact.calls_examined, impact.runs_examined]).toEqual([2, 2]);
  });
});

describe('when caps are counted over a replay', () => {
  const cap = { tool_id: null, per: 'sender' as const, limit: 1, window_s: 60 };
  const outcomes = (preview: PolicyPreview) => preview.impact(window).calls.changed.map((c) => [c.call_id, c.reason]);

  test("then a sender's second call within the window has no room, another sender's has, and a call past the window has again", () => {
    const preview = previewOf(sundae, { kind: 'update', agent_id: 1, attachment_id: 2, terms: { caps: [cap] } });
    preview.addCall(call(1));
    preview.addCall(call(2));
    preview.addCall(call(3, { routing_key: 'ops@thescoop.com' }));
    preview.addCall(call(120));
    expect(outcomes(preview)).toEqual([[2, 'cap_exceeded']]);
  });

  test('then a call runs through the next attachment when the first has no room', () => {
    const twice: AgentPolicyData = {
      ...sundae,
      attachments: [
        ...sundae.attachments,
        attachment(3, 12, ['process_refund'], { rules: [{ id: 2, kind: 'allow', pattern: '*@thescoop.com' }] }),
      ],
    };
    const capped: PolicyChange = { kind: 'update', agent_id: 1, attachment_id: 2, terms: { caps: [cap] } };
    const both = new PolicyPreview(
      new Map([
        [
          1,
          {
            current: compilePolicy(twice, LIVE),
            candidate: compilePolicy(applyChange(applyChange(twice, capped), { ...capped, attachment_id: 3 }), LIVE),
          },
        ],
      ]),
    );
    for (const id of [1, 2, 3]) both.addCall(call(id));
    expect(outcomes(both)).toEqual([[3, 'cap_exceeded']]);
  });
});

describe('when a preview is answered', () => {
  test('then a call is listed only when the change alters its outcome, with the record it came from', () => {
    const preview = previewOf(sundae, { kind: 'update', agent_id: 1, attachment_id: 2, terms: { rules: [] } });
    preview.addCall(call(1, { routing_key: 'jane@acme.com', status: 'denied' }));
    preview.addCall(call(2));
    const impact = preview.impact(window);
    expect(impact.calls.changed).toEqual([
      {
        call_id: 1,
        agent_id: 1,
        tool_id: 'process_refund',
        routing_key: 'jane@acme.com',
        at: new Date(at + 1000).toISOString(),
        was: 'denied',
        would_be: 'started',
        reason: 'offered',
      },
    ]);
    expect(impact.senders.gaining).toEqual([{ routing_key: 'jane@acme.com', agent_id: 1, tools: ['process_refund'], runs: 1 }]);
    expect(impact.runs_examined).toBe(2);
  });

  test('then records that do not say how the call came are counted as not replayed, and said so', () => {
    const preview = previewOf(sundae, { kind: 'detach', agent_id: 1, attachment_id: 2 });
    preview.addCall(call(1, { dispatch: null }));
    const impact = preview.impact(window);
    expect(impact.calls.changed).toEqual([]);
    expect(impact.not_replayed.calls).toBe(1);
    expect(impact.not_replayed.reason).toEqual(expect.any(String));
  });

  test('then a list stops at its limit, says it was cut, and the counts count every call', () => {
    const preview = previewOf(sundae, { kind: 'detach', agent_id: 1, attachment_id: 2 });
    for (let i = 1; i <= 105; i++) preview.addCall(call(i, { routing_key: `s${i}@thescoop.com` }));
    const impact = preview.impact(window);
    expect(impact.calls.changed).toHaveLength(100);
    expect(impact.senders.losing).toHaveLength(100);
    expect(impact.calls.counts.refused).toBe(105);
    expect(impact.truncated).toBe(true);
  });

  test('then the records of an agent the change does not reach are not read at all', () => {
    const preview = previewOf(sundae, { kind: 'detach', agent_id: 1, attachment_id: 2 });
    preview.addCall(call(1, { agent_id: 7 }));
    expect(preview.impact(window).calls_examined).toBe(0);
  });
});

describe('when the calls of uncapped tools are counted together', () => {
  const senders = ['jane@acme.com', 'mara@thescoop.com', 'ops@thescoop.com'];
  const tools = ['lookup_order', 'process_refund', 'send_email'];
  const calls = Array.from({ length: 120 }, (_, i) =>
    call(i + 1, {
      routing_key: senders[i % 3]!,
      tool_id: tools[Math.floor(i / 3) % 3]!,
      dispatch: i % 7 === 0 ? 'step' : 'call',
      run_key: `run-${Math.floor(i / 4)}`,
    }),
  );

  test('then the answer is the one replaying each call in time order gives, its list the first changed calls', () => {
    const change: PolicyChange = { kind: 'update', agent_id: 1, attachment_id: 2, terms: { rules: [] } };
    const oneByOne = previewOf(sundae, change);
    for (const c of calls) oneByOne.addCall(c);
    const counted = previewOf(sundae, change);
    const groups = new Map<string, { calls: RecordedCall[] }>();
    for (const c of calls) {
      const key = `${c.routing_key}|${c.tool_id}|${c.dispatch}`;
      if (!groups.has(key)) groups.set(key, { calls: [] });
      groups.get(key)!.calls.push(c);
    }
    for (const sender of senders) {
      counted.addRunGroup({
        agent_id: 1,
        run: 'sender',
        routing_key: sender,
        runs: new Set(calls.filter((c) => c.routing_key === sender).map((c) => c.run_key)).size,
      });
    }
    counted.countRuns(new Set(calls.map((c) => c.run_key)).size);
    const changed: RecordedCall[] = [];
    for (const { calls: of } of groups.values()) {
      const first = of[0]!;
      if (counted.addCallGroup({ ...first, calls: of.length }) === 'changed') changed.push(...of);
    }
    for (const c of changed.sort((a, b) => a.at - b.at).slice(0, 100)) counted.addChangedExample(c);
    expect(counted.impact(window)).toEqual(oneByOne.impact(window));
    expect(oneByOne.impact(window).calls.counts.admitted).toBeGreaterThan(0);
  });

  test("then a run group's tool that some cap counts is left to the replay in time order, and the same tool of a sender no cap reaches is not", () => {
    const change: PolicyChange = {
      kind: 'update',
      agent_id: 1,
      attachment_id: 2,
      terms: { caps: [{ tool_id: null, per: 'sender', limit: 1, window_s: 60 }] },
    };
    const preview = previewOf(sundae, change);
    const refund = { agent_id: 1, run: 'sender' as const, tool_id: 'process_refund', dispatch: 'call' as const, calls: 3 };
    expect(preview.addCallGroup({ ...refund, routing_key: 'mara@thescoop.com' })).toBe('ordered');
    expect(preview.addCallGroup({ ...refund, routing_key: 'mara@thescoop.com', dispatch: null })).toBe('ordered');
    expect(preview.addCallGroup({ ...refund, routing_key: 'jane@acme.com' })).toBe('same');
    expect(preview.impact(window).calls_examined).toBe(3);
  });
});

describe('when an MCP tool is held', () => {
  test('then the preview counts its calls as refused under both policies: a change that grants it admits none, and no sender gains it', () => {
    const change: PolicyChange = { kind: 'update', agent_id: 1, attachment_id: 2, terms: { rules: [] } };
    const preview = previewOf(sundae, change, new Set(['process_refund']));
    preview.addCall(call(1, { routing_key: 'jane@acme.com', status: 'denied' }));
    preview.addCall(call(2, { routing_key: 'jane@acme.com', tool_id: 'lookup_order' }));
    const impact = preview.impact(window);
    expect(impact.calls.changed).toEqual([]);
    expect(impact.senders.gaining).toEqual([]);
    const notHeld = previewOf(sundae, change);
    notHeld.addCall(call(1, { routing_key: 'jane@acme.com', status: 'denied' }));
    expect(notHeld.impact(window).calls.counts.admitted).toBe(1);
  });
});
