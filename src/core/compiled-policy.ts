// An agent's policy built once into lookup structures, like CASL's RuleIndex, so that asking which
// tools a run gets costs a few map lookups. resolve() answers exactly what resolveRun does (same
// decisions, same first-in-order matched rule); offer() (and toolsFor() and offers() over it) skips
// the why.
//
// For offer, every rule of every attachment is indexed together: exact patterns by the whole key,
// `*@domain` patterns by the key's domain, the rest tried in turn; each entry carries a bitmask of
// the attachments holding it, so one pass tells which attachments a key is denied or allowed by.
// A run's offer is then one number, the mask of the attachments that admitted it: a tool is offered
// when the mask meets the mask of the attachments carrying it. Approval (SEMANTICS §12) is a second
// mask, of the admitting attachments whose calls this run makes as usual: those without approval,
// and those whose approvers match the run's key. A tool carried only outside it can be requested.
//
// A compiled policy is immutable once built: a cache may share one between concurrent runs.
import { checkRule, hasRoutingKey, isApprover, unknownRun, type RuleCheck } from './gate';
import type { KeyMatcher } from './pattern';
import { approvalTerms, capsOnTool, resolutionOf, splitMembers } from './resolution';
import type { AgentPolicyData, AttachmentExplanation, CapRule, GateDecision, GateRule, Resolution, Run } from './types';

export interface CompiledPolicy {
  readonly agent_id: number;
  resolve(run: Run): Resolution;
  /** What the run is offered, decided once: what a ToolRun keeps and checks every dispatch against. */
  offer(run: Run): RunOffer;
  /** The tools the run is offered, in a Set of the caller's own. */
  toolsFor(run: Run): Set<string>;
  offers(run: Run, toolId: string): boolean;
  /** The agent's access rules' decision on a sender run (SEMANTICS §9); null for other runs. */
  access(run: Run): GateDecision | null;
  /** Whether any attachment requires approval: without one, nothing about approvals is looked up. */
  readonly hasApprovals: boolean;
  /** Whether some attachment requiring approval carries the tool. */
  approvalCarries(toolId: string): boolean;
  /** Whether a routing key may decide the requests bound to an attachment: it requires approval, and the key matches an approver. */
  mayDecide(attachmentId: number, routingKey: string | null): boolean;
  /** Whether an attachment (still) admits the run, past the access rules, and carries the live tool. */
  grantsThrough(run: Run, attachmentId: number, toolId: string): boolean;
  /** Whether any attachment caps its members: without one, nothing about caps is counted. */
  readonly hasCaps: boolean;
  /** The caps of one attachment that apply to a call of this tool (its own, and its all-members ones). */
  capsOf(attachmentId: number, toolId: string): readonly CapRule[];
}

/** One run's offer: the access rules' decision and the tools it admits. Immutable. */
export interface RunOffer {
  /** The agent's access rules' decision on a sender run; null for other runs. */
  readonly access: GateDecision | null;
  has(toolId: string): boolean;
  /** The offered tool ids, each once, in a new array. */
  list(): string[];
  /**
   * When the run can only request the tool (SEMANTICS §12), the attachment whose approval its call
   * needs (the first admitting one in order); null when a call runs as usual, or is not offered.
   */
  approvalFor(toolId: string): number | null;
  /** The offered tools this run can only request, each once, in a new array. */
  needingApproval(): string[];
  /**
   * The caps a call of the tool must find room in (SEMANTICS §13): null when an attachment that
   * lets the run call it as usual has no cap on it (grants only add); otherwise, for each such
   * attachment in order, its caps on the tool: the call runs through the first with room in all.
   */
  capsFor(toolId: string): readonly CapCandidate[] | null;
}

/** One attachment through which a capped call may run, and its caps that apply to the call. */
export interface CapCandidate {
  attachment_id: number;
  caps: readonly CapRule[];
}

export function compilePolicy(data: AgentPolicyData, liveToolIds: ReadonlySet<string>): CompiledPolicy {
  return new PolicyIndex(data, liveToolIds);
}

// Masks are 32-bit integers; an agent with more attachments than this is served by resolve().
const MAX_MASKED_ATTACHMENTS = 30;

interface IndexedMatcher {
  index: number;
  matches: KeyMatcher;
}

/** One attachment's rules for explaining a decision: exact patterns in maps, the rest in rule order. */
class GateIndex {
  readonly hasRules: boolean;
  readonly #allowList: boolean;
  readonly #rules: readonly GateRule[];
  readonly #denyExact = new Map<string, number>();
  readonly #denyOther: IndexedMatcher[] = [];
  readonly #allowExact = new Map<string, number>();
  readonly #allowOther: IndexedMatcher[] = [];

  constructor(rules: readonly GateRule[]) {
    this.#rules = [...rules];
    this.hasRules = rules.length > 0;
    this.#allowList = rules.some((rule) => rule.kind === 'allow');
    rules.forEach((rule, index) => {
      const check = checkRule(rule);
      const exact = check.deny ? this.#denyExact : this.#allowExact;
      const other = check.deny ? this.#denyOther : this.#allowOther;
      if (check.lookup?.by === 'key') {
        if (!exact.has(check.lookup.value)) exact.set(check.lookup.value, index);
      } else {
        other.push({ index, matches: check.matches });
      }
    });
  }

  decide(key: string | null): GateDecision {
    if (!this.hasRules) return NO_RULES;
    if (!hasRoutingKey(key)) return NO_ROUTING_KEY;
    const deny = firstMatch(this.#denyExact, this.#denyOther, key);
    if (deny !== -1) return decision(false, 'deny_rule', this.#rules[deny]);
    const allow = firstMatch(this.#allowExact, this.#allowOther, key);
    if (allow !== -1) return decision(true, 'allow_rule', this.#rules[allow]);
    return this.#allowList ? ALLOW_LIST_DEFAULT : BLOCK_LIST_DEFAULT;
  }
}

interface MaskedMatcher {
  mask: number;
  matches: KeyMatcher;
}

/**
 * One kind of rule (deny or allow) across all attachments: which attachments have one matching a
 * key. A table no rule needs is never made: a warm run then touches only the memory its agent's
 * rules use, which with thousands of agents cached is what a lookup costs.
 */
class RuleMasks {
  #byKey: Map<string, number> | null = null;
  #byDomain: Map<string, number> | null = null;
  #other: MaskedMatcher[] | null = null;

  /** Whether matching() reads the key's domain. */
  get byDomain(): boolean {
    return this.#byDomain !== null;
  }

  add(bit: number, check: RuleCheck): void {
    if (check.lookup === null) {
      (this.#other ??= []).push({ mask: bit, matches: check.matches });
      return;
    }
    const map = check.lookup.by === 'key' ? (this.#byKey ??= new Map()) : (this.#byDomain ??= new Map());
    map.set(check.lookup.value, (map.get(check.lookup.value) ?? 0) | bit);
  }

  matching(key: string, domain: string | null): number {
    let mask = this.#byKey?.get(key) ?? 0;
    if (domain !== null && this.#byDomain !== null) mask |= this.#byDomain.get(domain) ?? 0;
    if (this.#other !== null) {
      for (const m of this.#other) {
        if ((mask & m.mask) === 0 && m.matches(key)) mask |= m.mask;
      }
    }
    return mask;
  }
}

interface AttachmentIndex {
  attachment_id: number;
  toolkit_id: number;
  toolkit_name: string;
  allow_proactive: boolean;
  tools: readonly string[];
  stale_tool_ids: readonly string[];
  gate: GateIndex;
  approvers: readonly string[] | null;
  caps: readonly CapRule[];
}

class PolicyIndex implements CompiledPolicy {
  readonly agent_id: number;
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
  readonly #proactiveMask: number;
  readonly #allMask: number;
  /** The attachments that require approval, and the approver patterns across them. */
  readonly #approvalMask: number;
  readonly #approvers = new RuleMasks();
  /** For each live tool, the attachments that carry it. */
  readonly #carriers = new Map<string, number>();
  readonly hasApprovals: boolean;
  readonly hasCaps: boolean;

  constructor(data: AgentPolicyData, liveToolIds: ReadonlySet<string>) {
    this.agent_id = data.agent_id;
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
    let proactive = 0;
    let approval = 0;
    if (this.#masked) {
      data.attachments.forEach((a, i) => {
        const bit = 1 << i;
        if (a.rules.length === 0) open |= bit;
        else gated |= bit;
        if (a.allow_proactive === true) proactive |= bit;
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
    this.#proactiveMask = proactive;
    this.#approvalMask = approval;
    this.#allMask = open | gated;
    this.#byDomain = this.#deny.byDomain || this.#allow.byDomain;
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
        return this.#proactiveMask;
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

/** An offer as a mask of admitting attachments: a run's whole offer is one number and a few references. */
class MaskedOffer implements RunOffer {
  constructor(
    readonly access: GateDecision | null,
    private readonly admitted: number,
    /** The admitting attachments whose members this run calls as usual (all of them without approvals). */
    private readonly direct: number,
    private readonly carriers: ReadonlyMap<string, number>,
    private readonly attachments: readonly AttachmentIndex[],
    private readonly capped: boolean,
  ) {}

  capsFor(toolId: string): readonly CapCandidate[] | null {
    if (!this.capped) return null;
    const through = (this.carriers.get(toolId) ?? 0) & this.direct;
    const candidates: CapCandidate[] = [];
    for (let i = 0; i < this.attachments.length; i++) {
      if ((through & (1 << i)) === 0) continue;
      const a = this.attachments[i]!;
      const caps = capsOnTool(a.caps, toolId);
      // Grants only add: one attachment that lets the call run uncapped leaves it uncapped.
      if (caps.length === 0) return null;
      candidates.push({ attachment_id: a.attachment_id, caps });
    }
    return candidates.length === 0 ? null : candidates;
  }

  has(toolId: string): boolean {
    return ((this.carriers.get(toolId) ?? 0) & this.admitted) !== 0;
  }

  approvalFor(toolId: string): number | null {
    if (this.direct === this.admitted) return null;
    const carriers = this.carriers.get(toolId) ?? 0;
    const requestable = carriers & this.admitted;
    if (requestable === 0 || (carriers & this.direct) !== 0) return null;
    // The lowest bit: the first admitting attachment, in attachment order, that carries the tool.
    return this.attachments[31 - Math.clz32(requestable & -requestable)]?.attachment_id ?? null;
  }

  needingApproval(): string[] {
    if (this.direct === this.admitted) return [];
    return this.list().filter((id) => this.approvalFor(id) !== null);
  }

  list(): string[] {
    const tools = new Set<string>();
    this.attachments.forEach((a, i) => {
      if ((this.admitted & (1 << i)) !== 0) for (const id of a.tools) tools.add(id);
    });
    return [...tools];
  }
}

/** An offer as a list: a refused sender's (nothing), and an agent's with more attachments than a mask holds. */
class ListedOffer implements RunOffer {
  readonly #tools: ReadonlySet<string>;
  readonly #approvals: ReadonlyMap<string, number>;

  constructor(
    readonly access: GateDecision | null,
    tools: readonly string[],
    approvals: ReadonlyMap<string, number> = new Map(),
    private readonly caps: ((toolId: string) => readonly CapCandidate[] | null) | null = null,
  ) {
    this.#tools = new Set(tools);
    this.#approvals = approvals;
  }

  capsFor(toolId: string): readonly CapCandidate[] | null {
    return this.caps === null ? null : this.caps(toolId);
  }

  /** The offer a resolution explains: each tool it can only request bound to its first admitting attachment. */
  static of(resolution: Resolution, capsOf: ((attachmentId: number, toolId: string) => readonly CapRule[]) | null): ListedOffer {
    const approvals = new Map<string, number>();
    for (const id of resolution.needs_approval) {
      const through = resolution.attachments.find((a) => a.admitted && a.needs_approval && a.tools.includes(id));
      if (through) approvals.set(id, through.attachment_id);
    }
    const direct = resolution.attachments.filter((a) => a.admitted && !a.needs_approval).map((a) => a.attachment_id);
    return new ListedOffer(
      resolution.access,
      resolution.tools,
      approvals,
      capsOf === null ? null : (toolId) => candidatesOf(direct, toolId, resolution, capsOf),
    );
  }

  has(toolId: string): boolean {
    return this.#tools.has(toolId);
  }

  list(): string[] {
    return [...this.#tools];
  }

  approvalFor(toolId: string): number | null {
    return this.#approvals.get(toolId) ?? null;
  }

  needingApproval(): string[] {
    return [...this.#approvals.keys()];
  }
}

/** capsFor() over a resolution: the direct carriers in order, or null when one is uncapped. */
function candidatesOf(
  direct: readonly number[],
  toolId: string,
  resolution: Resolution,
  capsOf: (attachmentId: number, toolId: string) => readonly CapRule[],
): CapCandidate[] | null {
  const candidates: CapCandidate[] = [];
  for (const a of resolution.attachments) {
    if (!direct.includes(a.attachment_id) || !a.tools.includes(toolId)) continue;
    const caps = capsOf(a.attachment_id, toolId);
    if (caps.length === 0) return null;
    candidates.push({ attachment_id: a.attachment_id, caps });
  }
  return candidates.length === 0 ? null : candidates;
}

/** The index of the first rule, in rule order, that matches the key; -1 when none does. */
function firstMatch(exact: ReadonlyMap<string, number>, other: readonly IndexedMatcher[], key: string): number {
  const exactIndex = exact.get(key) ?? -1;
  for (const m of other) {
    if (exactIndex !== -1 && m.index > exactIndex) break;
    if (m.matches(key)) return m.index;
  }
  return exactIndex;
}

function decision(admitted: boolean, reason: GateDecision['reason'], matchedRule: GateRule | null = null): GateDecision {
  return { admitted, reason, matched_rule: matchedRule ?? null };
}

// The decisions that name no rule, made once: every run shares them, so they are frozen.
const NO_RULES = Object.freeze(decision(true, 'no_rules'));
const NO_ROUTING_KEY = Object.freeze(decision(false, 'no_routing_key'));
const ALLOW_LIST_DEFAULT = Object.freeze(decision(false, 'allow_list_default'));
const BLOCK_LIST_DEFAULT = Object.freeze(decision(true, 'block_list_default'));
