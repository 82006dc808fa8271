// One attachment's (or an agent's access) rules indexed for explaining a decision: exact patterns
// in maps, the rest in rule order, so the first matching rule in order is found without a scan.
import { ALLOW_LIST_DEFAULT, BLOCK_LIST_DEFAULT, decision, NO_ROUTING_KEY, NO_RULES } from './gate-decisions';
import { checkRule, hasRoutingKey } from './gate';
import type { KeyMatcher } from './pattern';
import type { GateDecision, GateRule } from './types';

interface IndexedMatcher {
  index: number;
  matches: KeyMatcher;
}

export class GateIndex {
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

/** The index of the first rule, in rule order, that matches the key; -1 when none does. */
function firstMatch(exact: ReadonlyMap<string, number>, other: readonly IndexedMatcher[], key: string): number {
  const exactIndex = exact.get(key) ?? -1;
  for (const m of other) {
    if (exactIndex !== -1 && m.index > exactIndex) break;
    if (m.matches(key)) return m.index;
  }
  return exactIndex;
}
