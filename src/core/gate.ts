// One attachment's decision for one run (SEMANTICS §5), in the contract's fixed order. This is the
// plain reading of the rules; compiled-policy.ts answers the same questions faster.
//
// A rule that cannot be checked is a refusal, never an admission. A broken rule is one whose
// pattern is not in the form parsePattern writes, or whose kind is neither allow nor deny:
// - a broken deny rule (or one of unknown kind) matches every routing key, since we cannot tell
//   whom it was written to keep out, so the attachment refuses every sender;
// - a broken allow rule matches no key but still counts as an allow rule, so the gate stays in
//   allow-list mode and only the attachment's other, valid allow rules can admit.
// When several rules match, the one reported is the first in the attachment's rule order.
import { patternLookup, tryCompilePattern, type KeyMatcher, type PatternLookup } from './pattern';
import type { AttachmentPolicy, GateDecision, GateRule, Run } from './types';

/** What a rule does once compiled; `lookup` says how it can be found without being tried. */
export interface RuleCheck {
  deny: boolean;
  matches: KeyMatcher;
  lookup: PatternLookup | null;
}

export function checkRule(rule: GateRule): RuleCheck {
  const matcher = tryCompilePattern(rule.pattern);
  if (rule.kind === 'allow') {
    return matcher === null
      ? { deny: false, matches: matchesNoKey, lookup: null }
      : { deny: false, matches: matcher, lookup: patternLookup(rule.pattern) };
  }
  if (rule.kind === 'deny' && matcher !== null) return { deny: true, matches: matcher, lookup: patternLookup(rule.pattern) };
  return { deny: true, matches: matchesAnyKey, lookup: null };
}

/** The empty string is never a routing key: it gets what a missing key gets. */
export function hasRoutingKey(routingKey: string | null): routingKey is string {
  return typeof routingKey === 'string' && routingKey !== '';
}

export function decideGate(rules: readonly GateRule[], routingKey: string | null): GateDecision {
  if (rules.length === 0) return decision(true, 'no_rules');
  if (!hasRoutingKey(routingKey)) return decision(false, 'no_routing_key');
  const checks = rules.map((rule) => ({ rule, ...checkRule(rule) }));
  const deny = checks.find((c) => c.deny && c.matches(routingKey));
  if (deny) return decision(false, 'deny_rule', deny.rule);
  const allow = checks.find((c) => !c.deny && c.matches(routingKey));
  if (allow) return decision(true, 'allow_rule', allow.rule);
  if (rules.some((rule) => rule.kind === 'allow')) return decision(false, 'allow_list_default');
  return decision(true, 'block_list_default');
}

export function decideAttachment(attachment: AttachmentPolicy, run: Run): GateDecision {
  switch (run.kind) {
    case 'scheduled':
      // A scheduled run has no sender: the gate rules play no part, only the opt-in flag does.
      return attachment.allow_proactive === true ? decision(true, 'proactive_allowed') : decision(false, 'proactive_off');
    case 'catalogue':
      return decision(true, 'catalogue');
    case 'sender':
      return decideGate(attachment.rules, run.routing_key);
    default:
      return unknownRun(run);
  }
}

/**
 * Whether a run's calls of an attachment's members need approval (SEMANTICS §12): the attachment
 * names approvers, and the run's routing key matches none of them. A run with no key (a scheduled
 * run, the catalogue) is nobody's approver. An approver pattern that cannot be checked approves no
 * one, as a broken allow rule admits no one.
 */
export function needsApproval(approvers: readonly string[] | null | undefined, run: Run): boolean {
  if (approvers === null || approvers === undefined) return false;
  if (run.kind !== 'sender' || !hasRoutingKey(run.routing_key)) return true;
  return !isApprover(approvers, run.routing_key);
}

/** Whether a routing key matches one of an attachment's approver patterns. */
export function isApprover(approvers: readonly string[], routingKey: string | null): boolean {
  if (!hasRoutingKey(routingKey)) return false;
  return approvers.some((pattern) => checkRule({ id: null, kind: 'allow', pattern }).matches(routingKey));
}

/**
 * The agent's access rules for a run (SEMANTICS §9): the gate's grammar and precedence against the
 * run's routing key, so no rules admit every sender and a run with no key passes only an agent
 * with no rules. Null for a scheduled run or the catalogue: access rules judge senders only.
 */
export function decideAccess(accessRules: readonly GateRule[], run: Run): GateDecision | null {
  return run.kind === 'sender' ? decideGate(accessRules, run.routing_key) : null;
}

/** A run kind the types rule out; it throws rather than guess, and a caller treats that as a refusal. */
export function unknownRun(run: never): never {
  throw new TypeError(`Unknown run kind ${JSON.stringify((run as { kind?: unknown }).kind)}: expected sender, scheduled or catalogue.`);
}

function decision(admitted: boolean, reason: GateDecision['reason'], matchedRule: GateRule | null = null): GateDecision {
  return { admitted, reason, matched_rule: matchedRule };
}

function matchesAnyKey(): boolean {
  return true;
}

function matchesNoKey(): boolean {
  return false;
}
