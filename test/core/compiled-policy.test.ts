import fc from 'fast-check';
import { compilePolicy } from '../../src/core/policy-index';
import { parsePattern } from '../../src/core/pattern';
import { resolveRun } from '../../src/core/resolution';
import { routingKeyOf } from '../../src/core/routing-key';
import type { AgentPolicyData, AttachmentPolicy, GateDecision, GateRule, Resolution, Run } from '../../src/core/types';

const LIVE: ReadonlySet<string> = new Set(['a_tool', 'b_tool', 'c_tool']);
const TOOL_IDS = ['a_tool', 'b_tool', 'c_tool', 'stale_one', 'stale_two'];

function normalized(raw: string): string {
  const parsed = parsePattern(raw);
  if (!parsed.ok) throw new Error(`test alphabet: ${raw} is not a pattern: ${parsed.reason}`);
  return parsed.pattern;
}

const VALID_PATTERNS = [
  '*',
  'Mara@TheScoop.com',
  '*@thescoop.com',
  'mara@*.thescoop.com',
  'ma*@thescoop.com',
  'jane@acme.com',
  '*@acme.com',
  'jane@Bücher.de',
  '*@xn--bcher-kva.de',
  'mara@*',
].map(normalized);
// Stored patterns that bypassed validation: the gate must treat them as broken, never as a grant.
const BROKEN_PATTERNS = ['Mara@TheScoop.com', 'not a pattern', '*@*.thescoop.com'];

const KEYS = [
  'Mara+billing@TheScoop.com',
  'jane@acme.com',
  'x@sub.thescoop.com',
  'mara@eu.thescoop.com',
  'x@evilthescoop.com',
  'jane@bücher.de',
  'ma@thescoop.com',
  'mara@acme.com',
  'not an address',
].map(routingKeyOf);

// The reference: a regex per pattern and the three steps of the contract, nothing precomputed.
function naiveMatches(pattern: string, key: string): boolean {
  if (pattern === '*') return true;
  const escaped = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('[^@]+')}$`).test(key);
}

function isBroken(pattern: string): boolean {
  const parsed = parsePattern(pattern);
  return !parsed.ok || parsed.pattern !== pattern;
}

function referenceDecision(a: AttachmentPolicy, run: Run): GateDecision {
  if (run.kind === 'scheduled')
    return { admitted: a.allow_proactive, reason: a.allow_proactive ? 'proactive_allowed' : 'proactive_off', matched_rule: null };
  if (run.kind === 'catalogue') return { admitted: true, reason: 'catalogue', matched_rule: null };
  const key = run.routing_key;
  if (a.rules.length === 0) return { admitted: true, reason: 'no_rules', matched_rule: null };
  if (!key) return { admitted: false, reason: 'no_routing_key', matched_rule: null };
  const deny = a.rules.find((r) => r.kind === 'deny' && (isBroken(r.pattern) || naiveMatches(r.pattern, key)));
  if (deny) return { admitted: false, reason: 'deny_rule', matched_rule: deny };
  const allow = a.rules.find((r) => r.kind === 'allow' && !isBroken(r.pattern) && naiveMatches(r.pattern, key));
  if (allow) return { admitted: true, reason: 'allow_rule', matched_rule: allow };
  if (a.rules.some((r) => r.kind === 'allow')) return { admitted: false, reason: 'allow_list_default', matched_rule: null };
  return { admitted: true, reason: 'block_list_default', matched_rule: null };
}

function referenceResolve(data: AgentPolicyData, run: Run): Resolution {
  const attachments = data.attachments.map((a) => {
    const members = [...new Set(a.member_tool_ids)];
    return {
      attachment_id: a.attachment_id,
      toolkit_id: a.toolkit_id,
      toolkit_name: a.toolkit_name,
      ...referenceDecision(a, run),
      tools: members.filter((id) => LIVE.has(id)),
      stale_tool_ids: members.filter((id) => !LIVE.has(id)),
      ...referenceApproval(a, run),
      caps: [...(a.caps ?? [])],
    };
  });
  // The agent's access rules: the same three steps, for sender runs only; a refusal offers nothing.
  const access =
    run.kind === 'sender'
      ? referenceDecision(
          {
            attachment_id: 0,
            toolkit_id: 0,
            toolkit_name: '',
            allow_proactive: false,
            member_tool_ids: [],
            rules: data.access_rules ?? [],
          },
          run,
        )
      : null;
  const admitting = access?.admitted === false ? [] : attachments.filter((a) => a.admitted);
  const tools = [...new Set(admitting.flatMap((a) => a.tools))].sort();
  // A tool needs approval when every admitting attachment carrying it needs approval for this run.
  const needs_approval = tools.filter((id) => admitting.filter((a) => a.tools.includes(id)).every((a) => a.needs_approval));
  // A tool is capped when every attachment it runs under caps it: those carrying it without
  // approval, or when there are none, the first carrying it (its requests are filed there).
  const capped = tools.filter((id) => {
    const carrying = admitting.filter((a) => a.tools.includes(id));
    const under = needs_approval.includes(id) ? carrying.slice(0, 1) : carrying.filter((a) => !a.needs_approval);
    return under.every((a) => a.caps.some((cap) => cap.tool_id === null || cap.tool_id === id));
  });
  return { run: run.kind, routing_key: run.kind === 'sender' ? run.routing_key : null, access, tools, needs_approval, capped, attachments };
}

// SEMANTICS §12, read plainly: approvers are allow patterns; a broken one approves no one, and a run
// with no key (scheduled, the catalogue, a sender without one) is nobody's approver.
function referenceApproval(a: AttachmentPolicy, run: Run): { approval: { approvers: string[] } | null; needs_approval: boolean } {
  if (a.approvers === null || a.approvers === undefined) return { approval: null, needs_approval: false };
  const key = run.kind === 'sender' ? run.routing_key : null;
  const approver = key !== null && a.approvers.some((p) => !isBroken(p) && naiveMatches(p, key));
  return { approval: { approvers: [...a.approvers] }, needs_approval: !approver };
}

const ruleArb = fc.record({
  kind: fc.constantFrom<GateRule['kind']>('allow', 'deny'),
  pattern: fc.oneof(
    { arbitrary: fc.constantFrom(...VALID_PATTERNS), weight: 9 },
    { arbitrary: fc.constantFrom(...BROKEN_PATTERNS), weight: 1 },
  ),
});

const approversArb = fc.oneof(
  { arbitrary: fc.constant(null), weight: 3 },
  {
    arbitrary: fc.array(
      fc.oneof({ arbitrary: fc.constantFrom(...VALID_PATTERNS), weight: 9 }, { arbitrary: fc.constantFrom(...BROKEN_PATTERNS), weight: 1 }),
      { maxLength: 3 },
    ),
    weight: 2,
  },
);

const capArb = fc.record({
  tool_id: fc.oneof(fc.constant(null), fc.constantFrom(...TOOL_IDS)),
  per: fc.constantFrom<'agent' | 'sender'>('agent', 'sender'),
  limit: fc.integer({ min: 1, max: 5 }),
  window_s: fc.constantFrom(60, 86_400),
});

const attachmentArb = fc.record({
  allow_proactive: fc.boolean(),
  member_tool_ids: fc.array(fc.constantFrom(...TOOL_IDS), { maxLength: 4 }),
  rules: fc.array(ruleArb, { maxLength: 4 }),
  approvers: approversArb,
  caps: fc.oneof({ arbitrary: fc.constant([]), weight: 2 }, { arbitrary: fc.array(capArb, { maxLength: 2 }), weight: 1 }),
});

const policyArb: fc.Arbitrary<AgentPolicyData> = fc
  .tuple(fc.array(attachmentArb, { maxLength: 5 }), fc.oneof(fc.constant([]), fc.array(ruleArb, { maxLength: 3 })))
  .map(([attachments, access]) => ({
    agent_id: 1,
    access_rules: access.map((r, j) => ({ id: 9000 + j, ...r })),
    // Unique rule ids, so that reporting the wrong one of two identical rules cannot pass unseen.
    attachments: attachments.map((a, i) => ({
      attachment_id: i + 1,
      toolkit_id: i + 10,
      toolkit_name: `Kit ${i}`,
      allow_proactive: a.allow_proactive,
      member_tool_ids: a.member_tool_ids,
      rules: a.rules.map((r, j) => ({ id: i * 100 + j, ...r })),
      approvers: a.approvers,
      caps: a.caps,
    })),
  }));

const runArb: fc.Arbitrary<Run> = fc.oneof(
  { arbitrary: fc.constantFrom(...KEYS).map((routing_key): Run => ({ kind: 'sender', routing_key })), weight: 6 },
  { arbitrary: fc.constant<Run>({ kind: 'sender', routing_key: null }), weight: 1 },
  { arbitrary: fc.constant<Run>({ kind: 'scheduled' }), weight: 1 },
  { arbitrary: fc.constant<Run>({ kind: 'catalogue' }), weight: 1 },
);

describe('compilePolicy', () => {
  test('when any small policy resolves any run, then resolve equals the reference and resolveRun', () => {
    fc.assert(
      fc.property(policyArb, runArb, (data, run) => {
        const expected = referenceResolve(data, run);
        expect(compilePolicy(data, LIVE).resolve(run)).toEqual(expected);
        expect(resolveRun(data, run, LIVE)).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  test('when any small policy is asked for a run, then its offer, toolsFor and offers agree with the resolution', () => {
    fc.assert(
      fc.property(policyArb, runArb, (data, run) => {
        const policy = compilePolicy(data, LIVE);
        const resolution = policy.resolve(run);
        const tools = resolution.tools;
        const offer = policy.offer(run);
        expect(offer.list().sort()).toEqual(tools);
        expect(TOOL_IDS.filter((id) => offer.has(id))).toEqual(TOOL_IDS.filter((id) => tools.includes(id)));
        expect(offer.access).toEqual(resolution.access);
        expect([...policy.toolsFor(run)].sort()).toEqual(tools);
        expect(TOOL_IDS.filter((id) => policy.offers(run, id))).toEqual(TOOL_IDS.filter((id) => tools.includes(id)));
        expect(policy.access(run)).toEqual(resolution.access);
        expect(offer.needingApproval().sort()).toEqual(resolution.needs_approval);
        // A call needing approval is bound to the first admitting attachment that carries the tool.
        for (const id of TOOL_IDS) {
          const bound = resolution.needs_approval.includes(id)
            ? resolution.attachments.find((a) => a.admitted && a.tools.includes(id))!.attachment_id
            : null;
          expect({ id, bound: offer.approvalFor(id) }).toEqual({ id, bound });
        }
      }),
      { numRuns: 1000 },
    );
  });

  test('when any small policy is asked who decides and what still grants, then mayDecide and grantsThrough agree with the resolution', () => {
    fc.assert(
      fc.property(policyArb, runArb, (data, run) => {
        const policy = compilePolicy(data, LIVE);
        const resolution = policy.resolve(run);
        const key = run.kind === 'sender' ? run.routing_key : null;
        for (const a of resolution.attachments) {
          const sender = resolveRun(data, { kind: 'sender', routing_key: key }, LIVE).attachments.find(
            (x) => x.attachment_id === a.attachment_id,
          )!;
          expect(policy.mayDecide(a.attachment_id, key)).toBe(a.approval !== null && key !== null && !sender.needs_approval);
          for (const id of TOOL_IDS) {
            expect(policy.grantsThrough(run, a.attachment_id, id)).toBe(
              resolution.access?.admitted !== false && a.admitted && a.tools.includes(id),
            );
          }
        }
        for (const id of TOOL_IDS) {
          expect(policy.approvalCarries(id)).toBe(resolution.attachments.some((a) => a.approval !== null && a.tools.includes(id)));
        }
      }),
      { numRuns: 500 },
    );
  });

  test('when any small policy with caps is asked which caps a call must find room in, then capsFor agrees with the resolution (grants only add)', () => {
    fc.assert(
      fc.property(policyArb, runArb, (data, run) => {
        const policy = compilePolicy(data, LIVE);
        const resolution = policy.resolve(run);
        const offer = policy.offer(run);
        for (const id of TOOL_IDS) {
          const direct =
            resolution.access?.admitted === false
              ? []
              : resolution.attachments.filter((a) => a.admitted && !a.needs_approval && a.tools.includes(id));
          const onTool = (a: (typeof direct)[number]) => a.caps.filter((c) => c.tool_id === null || c.tool_id === id);
          const expected =
            direct.length === 0 || direct.some((a) => onTool(a).length === 0)
              ? null
              : direct.map((a) => ({ attachment_id: a.attachment_id, caps: onTool(a) }));
          expect({ id, caps: offer.capsFor(id) }).toEqual({ id, caps: expected });
        }
      }),
      { numRuns: 1000 },
    );
  });

  test('when a caller changes the set it was given, then the next run is unaffected', () => {
    const data: AgentPolicyData = {
      agent_id: 1,
      attachments: [
        { attachment_id: 1, toolkit_id: 1, toolkit_name: 'Open', allow_proactive: true, member_tool_ids: ['a_tool'], rules: [] },
      ],
    };
    const policy = compilePolicy(data, LIVE);
    (policy.toolsFor({ kind: 'scheduled' }) as Set<string>).add('c_tool');
    expect([...policy.toolsFor({ kind: 'scheduled' })]).toEqual(['a_tool']);
  });

  test('when a caller changes the list an offer gave it, then neither that offer nor the next run is affected', () => {
    const data: AgentPolicyData = {
      agent_id: 1,
      attachments: [
        { attachment_id: 1, toolkit_id: 1, toolkit_name: 'Open', allow_proactive: true, member_tool_ids: ['a_tool'], rules: [] },
      ],
    };
    const policy = compilePolicy(data, LIVE);
    const offer = policy.offer({ kind: 'scheduled' });
    offer.list().push('c_tool');
    expect(offer.list()).toEqual(['a_tool']);
    expect(offer.has('c_tool')).toBe(false);
    expect(policy.offer({ kind: 'scheduled' }).list()).toEqual(['a_tool']);
  });

  test('when an agent has more attachments than a bitmask holds, then toolsFor still equals the resolution', () => {
    const data: AgentPolicyData = {
      agent_id: 1,
      attachments: Array.from({ length: 40 }, (_, i) => ({
        attachment_id: i,
        toolkit_id: i,
        toolkit_name: `Kit ${i}`,
        allow_proactive: false,
        member_tool_ids: [TOOL_IDS[i % TOOL_IDS.length] ?? 'a_tool'],
        rules: i === 35 ? [{ id: i, kind: 'allow' as const, pattern: '*@thescoop.com' }] : [{ id: i, kind: 'deny' as const, pattern: '*' }],
      })),
    };
    const policy = compilePolicy(data, LIVE);
    const run: Run = { kind: 'sender', routing_key: 'mara@thescoop.com' };
    expect([...policy.toolsFor(run)]).toEqual(['a_tool']);
    expect(policy.offers(run, 'a_tool')).toBe(true);
    expect(policy.offers(run, 'b_tool')).toBe(false);
  });

  test('when an agent with more attachments than a bitmask holds needs approval, then the listed offer binds it as the resolution says', () => {
    const data: AgentPolicyData = {
      agent_id: 1,
      attachments: Array.from({ length: 40 }, (_, i) => ({
        attachment_id: i + 1,
        toolkit_id: i + 1,
        toolkit_name: `Kit ${i}`,
        allow_proactive: false,
        member_tool_ids: [i < 39 ? 'a_tool' : 'b_tool'],
        rules: [],
        approvers: i === 39 ? null : ['*@thescoop.com'],
      })),
    };
    const offer = compilePolicy(data, LIVE).offer({ kind: 'sender', routing_key: 'jane@acme.com' });
    expect(offer.needingApproval()).toEqual(['a_tool']);
    expect(offer.approvalFor('a_tool')).toBe(1);
    expect(offer.approvalFor('b_tool')).toBeNull();
    expect(compilePolicy(data, LIVE).offer({ kind: 'sender', routing_key: 'mara@thescoop.com' }).approvalFor('a_tool')).toBeNull();
  });

  test('when one attachment needs approval and another offers the same tool without it, then the tool runs as usual', () => {
    const data: AgentPolicyData = {
      agent_id: 1,
      attachments: [
        {
          attachment_id: 1,
          toolkit_id: 1,
          toolkit_name: 'Finance',
          allow_proactive: false,
          member_tool_ids: ['a_tool'],
          rules: [],
          approvers: ['*@thescoop.com'],
        },
        {
          attachment_id: 2,
          toolkit_id: 2,
          toolkit_name: 'Trusted',
          allow_proactive: false,
          member_tool_ids: ['a_tool'],
          rules: [{ id: 1, kind: 'allow', pattern: 'jane@acme.com' }],
        },
      ],
    };
    const policy = compilePolicy(data, LIVE);
    expect(policy.offer({ kind: 'sender', routing_key: 'jane@acme.com' }).approvalFor('a_tool')).toBeNull();
    expect(policy.offer({ kind: 'sender', routing_key: 'omar@example.org' }).approvalFor('a_tool')).toBe(1);
    expect(policy.resolve({ kind: 'sender', routing_key: 'jane@acme.com' })).toMatchObject({ tools: ['a_tool'], needs_approval: [] });
  });

  test('when several rules match, then the first in rule order is reported by both resolutions', () => {
    const data: AgentPolicyData = {
      agent_id: 1,
      attachments: [
        {
          attachment_id: 1,
          toolkit_id: 1,
          toolkit_name: 'Finance',
          allow_proactive: false,
          member_tool_ids: ['a_tool'],
          rules: [
            { id: 1, kind: 'deny', pattern: '*@thescoop.com' },
            { id: 2, kind: 'deny', pattern: 'mara@thescoop.com' },
          ],
        },
      ],
    };
    const run: Run = { kind: 'sender', routing_key: 'mara@thescoop.com' };
    expect(compilePolicy(data, LIVE).resolve(run).attachments[0]?.matched_rule?.id).toBe(1);
    expect(resolveRun(data, run, LIVE).attachments[0]?.matched_rule?.id).toBe(1);
  });
});

describe('parsePattern idempotence', () => {
  const char = fc.constantFrom('a', 'M', 'x', 'n', '-', '.', '@', '*', '+', 'ü', 'é', 'Ж', '\u0301', '1', '_');

  test('when a free string is accepted, then parsing its pattern again gives the same pattern', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.string({ unit: char, maxLength: 20 }), (raw) => {
        const first = parsePattern(raw);
        if (first.ok) {
          accepted += 1;
          expect(parsePattern(first.pattern)).toEqual(first);
        }
      }),
      { numRuns: 500 },
    );
    expect(accepted).toBeGreaterThan(0);
  });

  test('when an address-shaped string is accepted, then parsing its pattern again gives the same pattern', () => {
    const part = fc.string({ unit: char.filter((c) => c !== '@' && c !== '.'), minLength: 1, maxLength: 6 });
    // Host names hold no "_" (a domain with one is refused), so labels are drawn without it.
    const label = fc.string({ unit: char.filter((c) => c !== '@' && c !== '.' && c !== '_'), minLength: 1, maxLength: 6 });
    const shaped = fc
      .tuple(part, fc.array(label, { minLength: 1, maxLength: 3 }), fc.boolean())
      .map(([local, labels, dot]) => `${local}@${labels.join('.')}${dot ? '.' : ''}`);
    let accepted = 0;
    fc.assert(
      fc.property(shaped, (raw) => {
        const first = parsePattern(raw);
        if (first.ok) {
          accepted += 1;
          expect(parsePattern(first.pattern)).toEqual(first);
        }
      }),
      { numRuns: 1000 },
    );
    expect(accepted).toBeGreaterThan(100);
  });
});
