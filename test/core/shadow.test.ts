import fc from 'fast-check';
import { compilePolicy } from '../../src/core/policy-index';
import { resolveRun } from '../../src/core/resolution';
import { offerShadow, shadowRecord, verdictOf, verdictReason, withCandidate } from '../../src/core/shadow';
import type { AgentPolicyData, AttachmentPolicy, CandidateTerms, GateRule, Run } from '../../src/core/types';

const LIVE: ReadonlySet<string> = new Set(['a_tool', 'b_tool', 'c_tool']);
const PATTERNS = ['*@thescoop.com', 'mara@thescoop.com', '*@acme.com', 'jane@acme.com', 'ma*@thescoop.com'];
const KEYS = ['mara@thescoop.com', 'jane@acme.com', 'omar@acme.com', 'x@example.org', null];

const rule = fc.record({
  id: fc.constant(null),
  kind: fc.constantFrom('allow' as const, 'deny' as const),
  pattern: fc.constantFrom(...PATTERNS),
});
const rules = fc.uniqueArray(rule, { maxLength: 3, selector: (r: GateRule) => `${r.kind} ${r.pattern}` });
const approvers = fc.option(fc.uniqueArray(fc.constantFrom(...PATTERNS), { maxLength: 2 }), { nil: null });
const candidate: fc.Arbitrary<CandidateTerms> = fc.record({ rules, approvers, allow_proactive: fc.boolean() }, { requiredKeys: [] });
const attachment = (i: number): fc.Arbitrary<AttachmentPolicy> =>
  fc.record({
    attachment_id: fc.constant(i + 1),
    toolkit_id: fc.constant(i + 1),
    toolkit_name: fc.constant(`Kit ${i + 1}`),
    allow_proactive: fc.boolean(),
    member_tool_ids: fc.uniqueArray(fc.constantFrom('a_tool', 'b_tool', 'c_tool', 'stale_one'), { maxLength: 3 }),
    rules,
    approvers,
    candidate: fc.option(candidate, { nil: null }),
  });
const policyData: fc.Arbitrary<AgentPolicyData> = fc
  .integer({ min: 0, max: 4 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => attachment(i))))
  .map((attachments) => ({ agent_id: 1, access_rules: [], attachments }));
const run: fc.Arbitrary<Run> = fc.oneof(
  fc.constantFrom(...KEYS).map((routing_key): Run => ({ kind: 'sender', routing_key })),
  fc.constant<Run>({ kind: 'scheduled' }),
);

const withoutCandidates = (data: AgentPolicyData): AgentPolicyData => ({
  ...data,
  attachments: data.attachments.map((a) => ({ ...a, candidate: null })),
});

describe('when attachments carry candidate terms', () => {
  test('then the live offer and resolution are exactly those of the policy without them: a candidate never grants', () => {
    fc.assert(
      fc.property(policyData, run, (data, r) => {
        const live = compilePolicy(data, LIVE);
        const plain = compilePolicy(withoutCandidates(data), LIVE);
        expect(live.offer(r).list().sort()).toEqual(plain.offer(r).list().sort());
        expect(live.offer(r).needingApproval().sort()).toEqual(plain.offer(r).needingApproval().sort());
        expect(live.resolve(r)).toEqual(plain.resolve(r));
      }),
      { numRuns: 500 },
    );
  });

  test("then each candidate's compiled policy resolves as the reference does with its terms in place", () => {
    fc.assert(
      fc.property(policyData, run, (data, r) => {
        const compiled = compilePolicy(data, LIVE);
        expect(compiled.shadows.map((s) => s.attachment_id)).toEqual(
          data.attachments.filter((a) => a.candidate).map((a) => a.attachment_id),
        );
        for (const shadow of compiled.shadows) {
          const reference = resolveRun(withCandidate(data, shadow.attachment_id), r, LIVE);
          expect(shadow.policy.offer(r).list().sort()).toEqual(reference.tools);
          expect(shadow.policy.offer(r).needingApproval().sort()).toEqual(reference.needs_approval);
          expect(shadow.policy.shadows).toEqual([]);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('when a candidate denies a domain the live terms admit', () => {
  const data: AgentPolicyData = {
    agent_id: 1,
    attachments: [
      {
        attachment_id: 7,
        toolkit_id: 1,
        toolkit_name: 'Support',
        allow_proactive: false,
        member_tool_ids: ['a_tool', 'b_tool'],
        rules: [],
        candidate: { rules: [{ id: null, kind: 'deny', pattern: '*@acme.com' }] },
      },
    ],
  };
  const jane: Run = { kind: 'sender', routing_key: 'jane@acme.com' };
  const compiled = compilePolicy(data, LIVE);
  const shadow = compiled.shadows[0]!;

  test('then the run shadow removes its tools, and a call would be denied by the deny rule', () => {
    expect(offerShadow(7, compiled.offer(jane), shadow.policy.offer(jane))).toEqual({
      attachment_id: 7,
      adds: [],
      removes: ['a_tool', 'b_tool'],
    });
    const would = verdictOf(shadow.policy.offer(jane), 'a_tool');
    expect(would).toBe('denied');
    expect(verdictReason(shadow.policy.resolve(jane), would, 'a_tool', 7)).toBe('deny_rule');
  });

  test('then a sender both admit has no run shadow', () => {
    const mara: Run = { kind: 'sender', routing_key: 'mara@thescoop.com' };
    expect(offerShadow(7, compiled.offer(mara), shadow.policy.offer(mara))).toBeNull();
  });
});

describe('when a record gathers the entries of several attachments', () => {
  test('then the first is at its top and the others are in also; none is no shadow', () => {
    expect(shadowRecord([])).toBeNull();
    expect(shadowRecord([{ attachment_id: 1 }])).toEqual({ attachment_id: 1 });
    expect(shadowRecord([{ attachment_id: 1 }, { attachment_id: 2 }])).toEqual({ attachment_id: 1, also: [{ attachment_id: 2 }] });
  });
});
