import { decideAttachment, decideGate } from '../../src/core/gate';
import type { AttachmentPolicy, GateReason, GateRule, Run } from '../../src/core/types';

const allow = (pattern: string, id = 1): GateRule => ({ id, kind: 'allow', pattern });
const deny = (pattern: string, id = 2): GateRule => ({ id, kind: 'deny', pattern });

describe('decideGate', () => {
  test.each<[string, GateRule[], string | null, boolean, GateReason, number | null]>([
    ['no rules, a sender', [], 'jane@acme.com', true, 'no_rules', null],
    ['no rules, no routing key', [], null, true, 'no_rules', null],
    ['an allow rule, no routing key', [allow('*@thescoop.com')], null, false, 'no_routing_key', null],
    ['a deny rule, no routing key', [deny('jane@acme.com')], null, false, 'no_routing_key', null],
    ['an allow rule, an empty key', [allow('*')], '', false, 'no_routing_key', null],
    ['a matching allow rule', [allow('*@thescoop.com')], 'mara@thescoop.com', true, 'allow_rule', 1],
    ['an allow rule that does not match', [allow('*@thescoop.com')], 'jane@acme.com', false, 'allow_list_default', null],
    ['an allow rule and a subdomain sender', [allow('*@thescoop.com')], 'x@sub.thescoop.com', false, 'allow_list_default', null],
    ['a matching deny rule', [deny('jane@acme.com')], 'jane@acme.com', false, 'deny_rule', 2],
    ['a deny rule that does not match', [deny('jane@acme.com')], 'mara@thescoop.com', true, 'block_list_default', null],
    [
      'a deny and an allow matching the same key',
      [allow('*@thescoop.com'), deny('mara@thescoop.com')],
      'mara@thescoop.com',
      false,
      'deny_rule',
      2,
    ],
    [
      'a deny of another key beside a matching allow',
      [allow('*@thescoop.com'), deny('jane@thescoop.com')],
      'mara@thescoop.com',
      true,
      'allow_rule',
      1,
    ],
    ['allow * and any sender', [allow('*')], 'anyone@anywhere.org', true, 'allow_rule', 1],
    ['deny * and any sender', [deny('*')], 'anyone@anywhere.org', false, 'deny_rule', 2],
    ['a subdomain allow and a subdomain sender', [allow('mara@*.thescoop.com')], 'mara@eu.thescoop.com', true, 'allow_rule', 1],
  ])('when %s, then the decision and reason follow the fixed order', (_name, rules, key, admitted, reason, matchedId) => {
    const decision = decideGate(rules, key);
    expect(decision).toEqual({
      admitted,
      reason,
      matched_rule: matchedId === null ? null : rules.find((r) => r.id === matchedId),
    });
  });

  test('when several deny rules match, then the first in rule order is reported', () => {
    const rules = [deny('*@thescoop.com', 10), deny('mara@thescoop.com', 11)];
    expect(decideGate(rules, 'mara@thescoop.com').matched_rule).toBe(rules[0]);
  });

  test('when a deny rule has a pattern that does not compile, then every sender is refused', () => {
    const broken = deny('Not A Pattern', 7);
    expect(decideGate([broken, allow('*')], 'mara@thescoop.com')).toEqual({ admitted: false, reason: 'deny_rule', matched_rule: broken });
  });

  test('when an allow rule has a pattern that does not compile, then it admits no one', () => {
    expect(decideGate([allow('Mara@TheScoop.com')], 'mara@thescoop.com')).toEqual({
      admitted: false,
      reason: 'allow_list_default',
      matched_rule: null,
    });
  });

  test('when a broken allow rule sits beside a valid one, then the valid one still admits', () => {
    const valid = allow('*@thescoop.com', 5);
    expect(decideGate([allow('bad pattern', 4), valid], 'mara@thescoop.com')).toEqual({
      admitted: true,
      reason: 'allow_rule',
      matched_rule: valid,
    });
  });

  test('when a rule has an unknown kind, then it refuses like a broken deny', () => {
    const odd = { id: 3, kind: 'maybe', pattern: 'jane@acme.com' } as unknown as GateRule;
    expect(decideGate([odd], 'mara@thescoop.com').admitted).toBe(false);
  });
});

describe('decideAttachment', () => {
  const attachment = (allowScheduled: boolean, rules: GateRule[]): AttachmentPolicy => ({
    attachment_id: 1,
    toolkit_id: 1,
    toolkit_name: 'Finance',
    allow_proactive: allowScheduled,
    member_tool_ids: ['process_refund'],
    rules,
  });

  test.each<[string, AttachmentPolicy, Run, boolean, GateReason]>([
    ['a scheduled run and the flag on', attachment(true, []), { kind: 'scheduled' }, true, 'proactive_allowed'],
    ['a scheduled run and the flag off', attachment(false, []), { kind: 'scheduled' }, false, 'proactive_off'],
    ['a scheduled run, the flag on and a deny *', attachment(true, [deny('*')]), { kind: 'scheduled' }, true, 'proactive_allowed'],
    ['a scheduled run, the flag off and an allow *', attachment(false, [allow('*')]), { kind: 'scheduled' }, false, 'proactive_off'],
    ['the catalogue and a deny *', attachment(false, [deny('*')]), { kind: 'catalogue' }, true, 'catalogue'],
    [
      'a sender run and an allow rule',
      attachment(false, [allow('*@thescoop.com')]),
      { kind: 'sender', routing_key: 'mara@thescoop.com' },
      true,
      'allow_rule',
    ],
    ['a sender run with no key and a rule', attachment(true, [allow('*')]), { kind: 'sender', routing_key: null }, false, 'no_routing_key'],
  ])('when %s, then the decision follows the run kind', (_name, att, run, admitted, reason) => {
    const decision = decideAttachment(att, run);
    expect({ admitted: decision.admitted, reason: decision.reason }).toEqual({ admitted, reason });
  });
});
