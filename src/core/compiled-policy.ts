// An agent's policy built once into lookup structures, like CASL's RuleIndex, so that asking which
// tools a run gets costs a few map lookups and string comparisons. resolve() answers exactly what
// resolveRun does (same decisions, same first-in-order matched rule); toolsFor() skips the why.
import { checkRule, hasRoutingKey, unknownRun } from './gate';
import type { KeyMatcher } from './pattern';
import { splitMembers } from './resolution';
import type { AgentPolicyData, AttachmentExplanation, GateDecision, GateRule, Resolution, Run } from './types';

export interface CompiledPolicy {
  readonly agent_id: number;
  resolve(run: Run): Resolution;
  toolsFor(run: Run): ReadonlySet<string>;
  offers(run: Run, toolId: string): boolean;
}

export function compilePolicy(data: AgentPolicyData, liveToolIds: ReadonlySet<string>): CompiledPolicy {
  return new PolicyIndex(data, liveToolIds);
}

interface IndexedMatcher {
  index: number;
  matches: KeyMatcher;
}

/** One attachment's rules by kind: exact patterns in a map, the rest as matchers in rule order. */
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
      if (check.exact === null) other.push({ index, matches: check.matches });
      else if (!exact.has(check.exact)) exact.set(check.exact, index);
    });
  }

  /** Whether a key is admitted, for a gate that has rules. */
  admits(key: string): boolean {
    if (this.#denyExact.has(key) || anyMatch(this.#denyOther, key)) return false;
    if (this.#allowExact.has(key) || anyMatch(this.#allowOther, key)) return true;
    return !this.#allowList;
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

interface AttachmentIndex {
  attachment_id: number;
  toolkit_id: number;
  toolkit_name: string;
  allow_proactive: boolean;
  tools: readonly string[];
  toolSet: ReadonlySet<string>;
  stale_tool_ids: readonly string[];
  gate: GateIndex;
}

class PolicyIndex implements CompiledPolicy {
  readonly agent_id: number;
  readonly #attachments: readonly AttachmentIndex[];
  readonly #scheduled: readonly string[];
  readonly #catalogue: readonly string[];
  readonly #noKey: readonly string[];

  constructor(data: AgentPolicyData, liveToolIds: ReadonlySet<string>) {
    this.agent_id = data.agent_id;
    this.#attachments = data.attachments.map((a) => {
      const members = splitMembers(a.member_tool_ids, liveToolIds);
      return {
        attachment_id: a.attachment_id,
        toolkit_id: a.toolkit_id,
        toolkit_name: a.toolkit_name,
        allow_proactive: a.allow_proactive === true,
        tools: members.tools,
        toolSet: new Set(members.tools),
        stale_tool_ids: members.stale_tool_ids,
        gate: new GateIndex(a.rules),
      };
    });
    this.#scheduled = unionOf(this.#attachments.filter((a) => a.allow_proactive));
    this.#catalogue = unionOf(this.#attachments);
    this.#noKey = unionOf(this.#attachments.filter((a) => !a.gate.hasRules));
  }

  // Each call gets a Set of its own: a shared one could be changed by one caller and leak that
  // sender's grants to the next run.
  toolsFor(run: Run): ReadonlySet<string> {
    const key = this.#keyOf(run);
    if (key === null) return new Set(this.#fixedOffer(run));
    const tools = new Set<string>();
    for (const a of this.#attachments) {
      if (a.tools.length > 0 && this.#admits(a, key)) {
        for (const id of a.tools) tools.add(id);
      }
    }
    return tools;
  }

  offers(run: Run, toolId: string): boolean {
    const key = this.#keyOf(run);
    if (key === null) return this.#fixedOffer(run).includes(toolId);
    return this.#attachments.some((a) => a.toolSet.has(toolId) && this.#admits(a, key));
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
    const offered = new Set(attachments.filter((a) => a.admitted).flatMap((a) => a.tools));
    return {
      run: run.kind,
      routing_key: run.kind === 'sender' ? run.routing_key : null,
      tools: [...offered].sort(),
      attachments,
    };
  }

  #admits(a: AttachmentIndex, key: string): boolean {
    return !a.gate.hasRules || a.gate.admits(key);
  }

  /** The routing key when the run's offer depends on it; null when it was settled at compile time. */
  #keyOf(run: Run): string | null {
    return run.kind === 'sender' && hasRoutingKey(run.routing_key) ? run.routing_key : null;
  }

  #fixedOffer(run: Run): readonly string[] {
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

function unionOf(admitted: readonly AttachmentIndex[]): readonly string[] {
  return Object.freeze([...new Set(admitted.flatMap((a) => a.tools))].sort());
}

function anyMatch(matchers: readonly IndexedMatcher[], key: string): boolean {
  for (const m of matchers) {
    if (m.matches(key)) return true;
  }
  return false;
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
