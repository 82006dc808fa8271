// One kind of rule (deny or allow) across an agent's attachments, as bitmasks of the attachments
// holding a matching rule: the compiled offer's one pass over a routing key.
import type { RuleCheck } from './gate';
import type { KeyMatcher } from './pattern';

interface MaskedMatcher {
  mask: number;
  matches: KeyMatcher;
}

/**
 * One kind of rule (deny or allow) across all attachments: which attachments have one matching a
 * key. A table no rule needs is never made: a warm run then touches only the memory its agent's
 * rules use, which with thousands of agents cached is what a lookup costs.
 */
export class RuleMasks {
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
