import { resolveRun } from '../../src/core/resolution';
import { routingKeyOf } from '../../src/core/routing-key';
import type { AgentPolicyData, Run } from '../../src/core/types';

const LIVE = new Set(['lookup_order', 'check_flavor_stock', 'process_refund', 'send_email']);

const sundae: AgentPolicyData = {
  agent_id: 1,
  attachments: [
    {
      attachment_id: 11,
      toolkit_id: 1,
      toolkit_name: 'Support',
      allow_proactive: false,
      member_tool_ids: ['lookup_order', 'check_flavor_stock'],
      rules: [],
    },
    {
      attachment_id: 12,
      toolkit_id: 2,
      toolkit_name: 'Finance',
      allow_proactive: false,
      member_tool_ids: ['process_refund'],
      rules: [{ id: 100, kind: 'allow', pattern: '*@thescoop.com' }],
    },
  ],
};

const scout: AgentPolicyData = {
  agent_id: 2,
  attachments: [
    { attachment_id: 21, toolkit_id: 2, toolkit_name: 'Finance', allow_proactive: false, member_tool_ids: ['process_refund'], rules: [] },
    {
      attachment_id: 22,
      toolkit_id: 3,
      toolkit_name: 'Operations',
      allow_proactive: true,
      member_tool_ids: ['check_flavor_stock', 'send_email'],
      rules: [],
    },
  ],
};

const senderRun = (from: string): Run => ({ kind: 'sender', routing_key: routingKeyOf(from) });

describe('resolveRun, the Scoop scenario', () => {
  test('when Jane writes to Sundae, then she gets Support and no process_refund', () => {
    const resolution = resolveRun(sundae, senderRun('jane@acme.com'), LIVE);
    expect(resolution.tools).toEqual(['check_flavor_stock', 'lookup_order']);
    expect(resolution.attachments.map((a) => [a.toolkit_name, a.reason])).toEqual([
      ['Support', 'no_rules'],
      ['Finance', 'allow_list_default'],
    ]);
  });

  test('when Mara replies with a tagged mixed-case address, then process_refund is offered by the allow rule', () => {
    const resolution = resolveRun(sundae, senderRun('Mara+billing@TheScoop.com'), LIVE);
    expect(resolution.routing_key).toBe('mara@thescoop.com');
    expect(resolution.tools).toEqual(['check_flavor_stock', 'lookup_order', 'process_refund']);
    expect(resolution.attachments[1]).toMatchObject({
      admitted: true,
      reason: 'allow_rule',
      matched_rule: { id: 100, kind: 'allow', pattern: '*@thescoop.com' },
    });
  });

  test('when Jane writes again after Mara, then she still gets no process_refund', () => {
    resolveRun(sundae, senderRun('Mara+billing@TheScoop.com'), LIVE);
    expect(resolveRun(sundae, senderRun('jane@acme.com'), LIVE).tools).not.toContain('process_refund');
  });

  test("when Scout's scheduled run resolves, then only Operations is offered", () => {
    const resolution = resolveRun(scout, { kind: 'scheduled' }, LIVE);
    expect(resolution).toMatchObject({ run: 'scheduled', routing_key: null, tools: ['check_flavor_stock', 'send_email'] });
    expect(resolution.attachments.map((a) => a.reason)).toEqual(['proactive_off', 'proactive_allowed']);
  });

  test('when a sender run has no routing key, then only attachments with no rules admit it', () => {
    expect(resolveRun(sundae, senderRun('not an address'), LIVE).tools).toEqual(['check_flavor_stock', 'lookup_order']);
  });

  test('when the catalogue is asked for, then every attached live tool is listed', () => {
    expect(resolveRun(sundae, { kind: 'catalogue' }, LIVE).tools).toEqual(['check_flavor_stock', 'lookup_order', 'process_refund']);
  });
});

describe('resolveRun, members and grants', () => {
  test('when a toolkit lists an unregistered tool, then it is reported stale and never granted', () => {
    const data: AgentPolicyData = {
      agent_id: 3,
      attachments: [
        {
          attachment_id: 31,
          toolkit_id: 4,
          toolkit_name: 'Old',
          allow_proactive: true,
          member_tool_ids: ['lookup_order', 'fax_sender'],
          rules: [],
        },
      ],
    };
    const resolution = resolveRun(data, { kind: 'catalogue' }, LIVE);
    expect(resolution.tools).toEqual(['lookup_order']);
    expect(resolution.attachments[0]).toMatchObject({ tools: ['lookup_order'], stale_tool_ids: ['fax_sender'] });
  });

  test('when a toolkit lists a member twice, then it appears once, in member order', () => {
    const data: AgentPolicyData = {
      agent_id: 3,
      attachments: [
        {
          attachment_id: 31,
          toolkit_id: 4,
          toolkit_name: 'Twice',
          allow_proactive: false,
          member_tool_ids: ['send_email', 'lookup_order', 'send_email'],
          rules: [],
        },
      ],
    };
    expect(resolveRun(data, { kind: 'catalogue' }, LIVE).attachments[0]?.tools).toEqual(['send_email', 'lookup_order']);
  });

  test('when one attachment denies the sender, then a tool another admitting attachment carries is still offered', () => {
    const data: AgentPolicyData = {
      agent_id: 4,
      attachments: [
        {
          attachment_id: 41,
          toolkit_id: 5,
          toolkit_name: 'Stock',
          allow_proactive: false,
          member_tool_ids: ['check_flavor_stock', 'process_refund'],
          rules: [{ id: 1, kind: 'deny', pattern: 'jane@acme.com' }],
        },
        {
          attachment_id: 42,
          toolkit_id: 6,
          toolkit_name: 'Open',
          allow_proactive: false,
          member_tool_ids: ['check_flavor_stock'],
          rules: [],
        },
      ],
    };
    const resolution = resolveRun(data, senderRun('jane@acme.com'), LIVE);
    expect(resolution.tools).toEqual(['check_flavor_stock']);
    expect(resolution.attachments[0]).toMatchObject({ admitted: false, reason: 'deny_rule' });
  });

  test('when an attachment refuses, then its live members are still explained', () => {
    const resolution = resolveRun(sundae, senderRun('jane@acme.com'), LIVE);
    expect(resolution.attachments[1]).toMatchObject({ admitted: false, tools: ['process_refund'], stale_tool_ids: [] });
  });
});
