// An agent's policy built once into lookup structures, like CASL's RuleIndex, so that asking which
// tools a run gets costs a few map lookups. resolve() answers exactly what resolveRun does (same
// decisions, same first-in-order matched rule); toolsFor() and offers() skip the why.
//
// For toolsFor, every rule of every attachment is indexed together: exact patterns by the whole
// key, `*@domain` patterns by the key's domain, the rest tried in turn; each entry carries a bitmask
// of the attachments holding it, so one pass tells which attachments a key is denied or allowed by.
//
// A compiled policy is immutable once built: a cache may share one between concurrent runs.
import { checkRule, hasRoutingKey, unknownRun, type RuleCheck } from './gate';
import type { KeyMatcher } from './pattern';
import { resolutionOf, splitMembers } from './resolution';
import type { AgentPolicyData, AttachmentExplanation, GateDecision, GateRule, Resolution, Run } from './types';

export interface CompiledPolicy {
  readonly agent_id: number;
  resolve(run: Run): Resolution;
  toolsFor(run: Run): ReadonlySet<string>;
  offers(run: Run, toolId: string): boolean;
  /** The agent's access rules' decision on a sender run (SEMANTICS §9); null for other runs. */
  access(run: Run): GateDecision | null;
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
    if (!this.hasRules) return decision(true, 'no_rules');
    if (!hasRoutingKey(key)) return decision(false, 'no_routing_key');
    const deny = firstMatch(this.#denyExact, this.#denyOther, key);
    if (deny !== -1) return decision(false, 'deny_rule', this.#rules[deny]);
    const allow = firstMatch(this.#allowExact, this.#allowOther, key);
    if (allow !== -1) return decision(true, 'allow_rule', this.#rules[allow]);
    return this.#allowList ? decision(false, 'allow_list_default') : decision(true, 'block_list_default');
  }
}

interface MaskedMatcher {
  mask: number;
  matches: KeyMatcher;
}

/** One kind of rule (deny or allow) across all attachments: which attachments have one matching a key. */
class RuleMasks {
  readonly #byKey = new Map<string, number>();
  readonly #byDomain = new Map<string, number>();
  readonly #other: MaskedMatcher[] = [];

  add(bit: number, check: RuleCheck): void {
    if (check.lookup === null) {
      this.#other.push({ mask: bit, matches: check.matches });
      return;
    }
    const map = check.lookup.by === 'key' ? this.#byKey : this.#byDomain;
    map.set(check.lookup.value, (map.get(check.lookup.value) ?? 0) | bit);
  }

  matching(key: string, domain: string | null): number {
    let mask = this.#byKey.get(key) ?? 0;
    if (domain !== null) mask |= this.#byDomain.get(domain) ?? 0;
    for (const m of this.#other) {
      if ((mask & m.mask) === 0 && m.matches(key)) mask |= m.mask;
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
}

class PolicyIndex implements CompiledPolicy {
  readonly agent_id: number;
  readonly #attachments: readonly AttachmentIndex[];
  /** The agent's access rules, decided before any attachment for a sender run. */
  readonly #access: GateIndex;
  readonly #masked: boolean;
  readonly #scheduled: ReadonlySet<string>;
  readonly #catalogue: ReadonlySet<string>;
  readonly #noKey: ReadonlySet<string>;
  readonly #deny = new RuleMasks();
  readonly #allow = new RuleMasks();
  readonly #openMask: number;
  readonly #gatedMask: number;
  readonly #allowListMask: number;
  /** For each live tool, the attachments that carry it. */
  readonly #carriers = new Map<string, number>();

  constructor(data: AgentPolicyData, liveToolIds: ReadonlySet<string>) {
    this.agent_id = data.agent_id;
    this.#access = new GateIndex(data.access_rules ?? []);
    this.#attachments = data.attachments.map((a) => ({
      attachment_id: a.attachment_id,
      toolkit_id: a.toolkit_id,
      toolkit_name: a.toolkit_name,
      allow_proactive: a.allow_proactive === true,
      ...splitMembers(a.member_tool_ids, liveToolIds),
      gate: new GateIndex(a.rules),
    }));
    this.#scheduled = unionOf(this.#attachments.filter((a) => a.allow_proactive));
    this.#catalogue = unionOf(this.#attachments);
    this.#noKey = unionOf(this.#attachments.filter((a) => !a.gate.hasRules));

    this.#masked = data.attachments.length <= MAX_MASKED_ATTACHMENTS;
    let open = 0;
    let gated = 0;
    let allowList = 0;
    if (this.#masked) {
      data.attachments.forEach((a, i) => {
        const bit = 1 << i;
        if (a.rules.length === 0) open |= bit;
        else gated |= bit;
        if (a.rules.some((rule) => rule.kind === 'allow')) allowList |= bit;
        for (const rule of a.rules) {
          const check = checkRule(rule);
          (check.deny ? this.#deny : this.#allow).add(bit, check);
        }
        for (const id of this.#attachments[i]?.tools ?? []) this.#carriers.set(id, (this.#carriers.get(id) ?? 0) | bit);
      });
    }
    this.#openMask = open;
    this.#gatedMask = gated;
    this.#allowListMask = allowList;
  }

  // Every call gets a Set of its own: a shared one could be changed by one caller and so leak
  // that sender's grants into the next run.
  toolsFor(run: Run): ReadonlySet<string> {
    if (this.#refusedAccess(run)) return new Set();
    const key = keyOf(run);
    if (key === null) return new Set(this.#fixedOffer(run));
    if (!this.#masked) return new Set(this.resolve(run).tools);
    const admitted = this.#admittedMask(key);
    const tools = new Set<string>();
    this.#attachments.forEach((a, i) => {
      if ((admitted & (1 << i)) !== 0) for (const id of a.tools) tools.add(id);
    });
    return tools;
  }

  offers(run: Run, toolId: string): boolean {
    if (this.#refusedAccess(run)) return false;
    const key = keyOf(run);
    if (key === null) return this.#fixedOffer(run).has(toolId);
    if (!this.#masked) return this.resolve(run).tools.includes(toolId);
    const carriers = this.#carriers.get(toolId) ?? 0;
    return carriers !== 0 && (this.#admittedMask(key) & carriers) !== 0;
  }

  access(run: Run): GateDecision | null {
    return run.kind === 'sender' ? this.#access.decide(run.routing_key) : null;
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
    }));
    return resolutionOf(run, this.access(run), attachments);
  }

  /** A sender run whom the agent's access rules refuse is offered nothing at all. */
  #refusedAccess(run: Run): boolean {
    return run.kind === 'sender' && this.#access.hasRules && !this.#access.decide(run.routing_key).admitted;
  }

  /** §5 for every attachment at once: open ones, and gated ones not denied and allowed or block-lists. */
  #admittedMask(key: string): number {
    const at = key.indexOf('@');
    const domain = at > 0 ? key.slice(at + 1) : null;
    const denied = this.#deny.matching(key, domain);
    const allowed = this.#allow.matching(key, domain);
    return this.#openMask | (this.#gatedMask & ~denied & (allowed | ~this.#allowListMask));
  }

  #fixedOffer(run: Run): ReadonlySet<string> {
    switch (run.kind) {
      case 'scheduled':
        return this.#scheduled;
      case 'catalogue':
        return this.#catalogue;
      case 'sender':
        return this.#noKey;
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

/** The routing key when the run's offer depends on it; null when it was settled at compile time. */
function keyOf(run: Run): string | null {
  return run.kind === 'sender' && hasRoutingKey(run.routing_key) ? run.routing_key : null;
}

function unionOf(admitted: readonly AttachmentIndex[]): ReadonlySet<string> {
  return new Set(admitted.flatMap((a) => a.tools));
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
