// An agent's policy compiled (compilePolicy): every rule of every attachment indexed together, as
// compiled-policy.ts describes, built once and cheap to ask, like CASL's RuleIndex.
import type { AttachmentIndex } from './attachment-index';
import type { CompiledPolicy, RunOffer, ShadowPolicy } from './compiled-policy';
import { decision, NO_RULES } from './gate-decisions';
import { checkRule, hasRoutingKey, isApprover, unknownRun } from './gate';
import { GateIndex } from './gate-index';
import { ListedOffer } from './listed-offer';
import { MaskedOffer } from './masked-offer';
import { approvalTerms, capsOnTool, resolutionOf, splitMembers } from './resolution';
import { RuleMasks } from './rule-masks';
import { withCandidate } from './shadow';
import type { AgentPolicyData, AttachmentExplanation, CapRule, GateDecision, Resolution, Run } from './types';

/** `version`: the agent's policy version the data was read at (SEMANTICS §16), which records of calls decided by it name. */
export function compilePolicy(data: AgentPolicyData, liveToolIds: ReadonlySet<string>, version: number | null = null): CompiledPolicy {
  return new PolicyIndex(data, liveToolIds, version);
}

// Masks are 32-bit integers; an agent with more attachments than this is served by resolve().
const MAX_MASKED_ATTACHMENTS = 30;

export class PolicyIndex implements CompiledPolicy {
  readonly agent_id: number;
  readonly version: number | null;
  readonly #attachments: readonly AttachmentIndex[];
  /** The agent's access rules, decided before any attachment for a sender run; null when it has none. */
  readonly #access: GateIndex | null;
  readonly #masked: boolean;
  readonly #deny = new RuleMasks();
  readonly #allow = new RuleMasks();
  readonly #openMask: number;
  readonly #gatedMask: number;
  readonly #allowListMask: number;
  /** Whether any rule is looked up by the key's domain (else the domain is never cut out). */
  readonly #byDomain: boolean;
  /** The attachments a scheduled run reaches: those whose `allow_proactive` (the contract's name) is on. */
  readonly #scheduledMask: number;
  readonly #allMask: number;
  /** The attachments that require approval, and the approver patterns across them. */
  readonly #approvalMask: number;
  readonly #approvers = new RuleMasks();
  /** For each live tool, the attachments that carry it. */
  readonly #carriers = new Map<string, number>();
  readonly hasApprovals: boolean;
  readonly hasCaps: boolean;
  readonly shadows: readonly ShadowPolicy[];

  constructor(data: AgentPolicyData, liveToolIds: ReadonlySet<string>, version: number | null = null) {
    this.agent_id = data.agent_id;
    this.version = version;
    this.#access = data.access_rules && data.access_rules.length > 0 ? new GateIndex(data.access_rules) : null;
    this.#attachments = data.attachments.map((a) => ({
      attachment_id: a.attachment_id,
      toolkit_id: a.toolkit_id,
      toolkit_name: a.toolkit_name,
      allow_proactive: a.allow_proactive === true,
      ...splitMembers(a.member_tool_ids, liveToolIds),
      gate: new GateIndex(a.rules),
      approvers: a.approvers ?? null,
      caps: a.caps ?? [],
    }));
    this.hasCaps = this.#attachments.some((a) => a.caps.length > 0);
    this.hasApprovals = this.#attachments.some((a) => a.approvers !== null);
    this.#masked = data.attachments.length <= MAX_MASKED_ATTACHMENTS;
    let open = 0;
    let gated = 0;
    let allowList = 0;
    let scheduled = 0;
    let approval = 0;
    if (this.#masked) {
      data.attachments.forEach((a, i) => {
        const bit = 1 << i;
        if (a.rules.length === 0) open |= bit;
        else gated |= bit;
        if (a.allow_proactive === true) scheduled |= bit;
        if (a.rules.some((rule) => rule.kind === 'allow')) allowList |= bit;
        for (const rule of a.rules) {
          const check = checkRule(rule);
          (check.deny ? this.#deny : this.#allow).add(bit, check);
        }
        if (a.approvers !== null && a.approvers !== undefined) {
          approval |= bit;
          // Approver patterns are allow patterns: a broken one approves no one.
          for (const pattern of a.approvers) this.#approvers.add(bit, checkRule({ id: null, kind: 'allow', pattern }));
        }
        for (const id of this.#attachments[i]?.tools ?? []) this.#carriers.set(id, (this.#carriers.get(id) ?? 0) | bit);
      });
    }
    this.#openMask = open;
    this.#gatedMask = gated;
    this.#allowListMask = allowList;
    this.#scheduledMask = scheduled;
    this.#approvalMask = approval;
    this.#allMask = open | gated;
    this.#byDomain = this.#deny.byDomain || this.#allow.byDomain;
    // Each candidate compiled once, here, with the candidate's terms in place (and no candidate left in it).
    this.shadows = data.attachments
      .filter((a) => a.candidate)
      .map((a) => ({
        attachment_id: a.attachment_id,
        policy: new PolicyIndex(withCandidate(data, a.attachment_id), liveToolIds),
        caps_stamp: a.candidate?.caps === undefined ? null : (a.candidate.stamp ?? '0'),
      }));
  }

  // The access rules are decided once, here; a sender they refuse is offered nothing at all.
  offer(run: Run): RunOffer {
    const access = this.access(run);
    if (access !== null && !access.admitted) return new ListedOffer(access, []);
    if (!this.#masked) return ListedOffer.of(this.resolve(run), this.hasCaps ? (id, tool) => this.capsOf(id, tool) : null);
    const admitted = this.#maskOf(run);
    return new MaskedOffer(access, admitted, this.#directMask(run, admitted), this.#carriers, this.#attachments, this.hasCaps);
  }

  capsOf(attachmentId: number, toolId: string): readonly CapRule[] {
    const a = this.#attachments.find((x) => x.attachment_id === attachmentId);
    return a === undefined ? [] : capsOnTool(a.caps, toolId);
  }

  approvalCarries(toolId: string): boolean {
    if (!this.hasApprovals) return false;
    return this.#attachments.some((a) => a.approvers !== null && a.tools.includes(toolId));
  }

  mayDecide(attachmentId: number, routingKey: string | null): boolean {
    const a = this.#attachments.find((x) => x.attachment_id === attachmentId);
    return a !== undefined && a.approvers !== null && isApprover(a.approvers, routingKey);
  }

  grantsThrough(run: Run, attachmentId: number, toolId: string): boolean {
    const access = this.access(run);
    if (access !== null && !access.admitted) return false;
    const a = this.#attachments.find((x) => x.attachment_id === attachmentId);
    return a !== undefined && a.tools.includes(toolId) && this.#decider(run)(a).admitted;
  }

  toolsFor(run: Run): Set<string> {
    return new Set(this.offer(run).list());
  }

  offers(run: Run, toolId: string): boolean {
    return this.offer(run).has(toolId);
  }

  access(run: Run): GateDecision | null {
    if (run.kind !== 'sender') return null;
    return this.#access === null ? NO_RULES : this.#access.decide(run.routing_key);
  }

  resolve(run: Run): Resolution {
    const decide = this.#decider(run);
    const attachments: AttachmentExplanation[] = this.#attachments.map((a) => ({
      attachment_id: a.attachment_id,
      toolkit_id: a.toolkit_id,
      toolkit_name: a.toolkit_name,
      ...decide(a),
      tools: [...a.tools],
      stale_tool_ids: [...a.stale_tool_ids],
      ...approvalTerms(a, run),
      caps: a.caps.map((cap) => ({ ...cap })),
    }));
    return resolutionOf(run, this.access(run), attachments);
  }

  /** Of the admitting attachments, those whose members this run calls as usual: no approval, or the key is an approver. */
  #directMask(run: Run, admitted: number): number {
    if (this.#approvalMask === 0) return admitted;
    let approving = 0;
    if (run.kind === 'sender' && hasRoutingKey(run.routing_key)) {
      const key = run.routing_key;
      const at = this.#approvers.byDomain ? key.indexOf('@') : -1;
      approving = this.#approvers.matching(key, at > 0 ? key.slice(at + 1) : null);
    }
    return admitted & ~(this.#approvalMask & ~approving);
  }

  /** §5 for every attachment at once: open ones, and gated ones not denied and allowed or block-lists. */
  #admittedMask(key: string): number {
    if (this.#gatedMask === 0) return this.#openMask;
    const at = this.#byDomain ? key.indexOf('@') : -1;
    const domain = at > 0 ? key.slice(at + 1) : null;
    const denied = this.#deny.matching(key, domain);
    const allowed = this.#allow.matching(key, domain);
    return this.#openMask | (this.#gatedMask & ~denied & (allowed | ~this.#allowListMask));
  }

  /** The attachments that admit the run: §5 for a sender with a key, else fixed at compile time. */
  #maskOf(run: Run): number {
    switch (run.kind) {
      case 'scheduled':
        return this.#scheduledMask;
      case 'catalogue':
        return this.#allMask;
      case 'sender':
        return hasRoutingKey(run.routing_key) ? this.#admittedMask(run.routing_key) : this.#openMask;
      default:
        return unknownRun(run);
    }
  }

  #decider(run: Run): (a: AttachmentIndex) => GateDecision {
    switch (run.kind) {
      case 'scheduled':
        return (a) => (a.allow_proactive ? decision(true, 'proactive_allowed') : decision(false, 'proactive_off'));
      case 'catalogue':
        return () => decision(true, 'catalogue');
      case 'sender':
        return (a) => a.gate.decide(run.routing_key);
      default:
        return unknownRun(run);
    }
  }
}
