// The gate decisions that name no rule, made once: every run shares them, so they are frozen.
import type { GateDecision, GateRule } from './types';

export function decision(admitted: boolean, reason: GateDecision['reason'], matchedRule: GateRule | null = null): GateDecision {
  return { admitted, reason, matched_rule: matchedRule ?? null };
}

export const NO_RULES = Object.freeze(decision(true, 'no_rules'));
export const NO_ROUTING_KEY = Object.freeze(decision(false, 'no_routing_key'));
export const ALLOW_LIST_DEFAULT = Object.freeze(decision(false, 'allow_list_default'));
export const BLOCK_LIST_DEFAULT = Object.freeze(decision(true, 'block_list_default'));
