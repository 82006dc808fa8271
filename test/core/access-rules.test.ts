// Agent access rules (SEMANTICS §9): the gate's precedence, applied to the agent itself, before any
// attachment: deny wins, then allow, then the derived default; no rules admit every sender; a run
// with no key passes only an agent with no rules; scheduled runs are not judged at all.
import { decideAccess } from '../../src/core/gate';
import { compilePolicy } from '../../src/core/policy-index';
import { resolveRun } from '../../src/core/resolution';
import type { AgentPolicyData, GateRule, Run } from '../../src/core/types';

const allow = (pattern: string, id = 1): GateRule => ({ id, kind: 'allow', pattern });
const deny = (pattern: string, id = 2): GateRule => ({ id, kind: 'deny', pattern });
const sender = (key: string | null): Run => ({ kind: 'sender', routing_key: key });

describe('decideAccess: the table of precedence, applied to an agent', () => {
  test.each([
    ['no rules, any sender', [], 'jane@acme.com', true, 'no_rules'],
    ['no rules, no routing key', [], null, true, 'no_rules'],
    ['an allow rule the sender matches', [allow('*@thescoop.com')], 'mara@thescoop.com', true, 'allow_rule'],
    ['an allow rule the sender misses: allow-list mode', [allow('*@thescoop.com')], 'jane@acme.com', false, 'allow_list_default'],
    ['only deny rules, a sender they miss: block-list mode', [deny('*@spam.example')], 'jane@acme.com', true, 'block_list_default'],
    ['only deny rules, a sender they match', [deny('*@spam.example')], 'x@spam.example', false, 'deny_rule'],
    [
      'a deny and an allow both matching: deny wins',
      [allow('*@thescoop.com', 1), deny('intern@thescoop.com', 2)],
      'intern@thescoop.com',
      false,
      'deny_rule',
    ],
    ['any rule, and no routing key', [deny('*@spam.example')], null, false, 'no_routing_key'],
  ] as const)("when the agent has %s, then the decision is as the gate's", (_name, rules, key, admitted, reason) => {
    expect(decideAccess([...rules], sender(key))).toMatchObject({ admitted, reason });
  });

  test('when the run is scheduled, then access rules do not judge it at all', () => {
    expect(decideAccess([allow('*@thescoop.com')], { kind: 'scheduled' })).toBeNull();
  });
});

describe('a resolution with access rules', () => {
  const policy: AgentPolicyData = {
    agent_id: 2,
    access_rules: [allow('*@thescoop.com')],
    attachments: [
      { attachment_id: 1, toolkit_id: 1, toolkit_name: 'Finance', allow_proactive: false, member_tool_ids: ['process_refund'], rules: [] },
      {
        attachment_id: 2,
        toolkit_id: 2,
        toolkit_name: 'Operations',
        allow_proactive: true,
        member_tool_ids: ['check_flavor_stock'],
        rules: [],
      },
    ],
  };
  const live = new Set(['process_refund', 'check_flavor_stock']);

  test('when the agent refuses the sender, then nothing is offered, though an open attachment would admit', () => {
    const resolution = resolveRun(policy, sender('jane@acme.com'), live);
    expect(resolution.access).toMatchObject({ admitted: false, reason: 'allow_list_default' });
    expect(resolution.tools).toEqual([]);
    expect(compilePolicy(policy, live).toolsFor(sender('jane@acme.com'))).toEqual(new Set());
    expect(compilePolicy(policy, live).offers(sender('jane@acme.com'), 'process_refund')).toBe(false);
  });

  test('when the agent admits the sender, then the attachments decide as before', () => {
    const resolution = compilePolicy(policy, live).resolve(sender('mara@thescoop.com'));
    expect(resolution.access).toMatchObject({ admitted: true, reason: 'allow_rule', matched_rule: { pattern: '*@thescoop.com' } });
    expect(resolution.tools).toEqual(['check_flavor_stock', 'process_refund']);
  });

  test('when the run is scheduled, then the access rules play no part and allow_proactive decides', () => {
    const resolution = resolveRun(policy, { kind: 'scheduled' }, live);
    expect(resolution.access).toBeNull();
    expect(resolution.tools).toEqual(['check_flavor_stock']);
  });
});
