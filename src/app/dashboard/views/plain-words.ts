// The gate's verdicts in an operator's words (SEMANTICS §5), for the pages that explain them.
import type { AttachmentExplanation } from '../../../core/types';
import type { RuleView } from '../../../services/attachments';

export function gateSummary(rules: readonly Pick<RuleView, 'kind'>[]): string {
  if (rules.length === 0) return 'Open: every sender passes.';
  if (rules.some((r) => r.kind === 'allow')) return 'Allow-list: only senders an allow rule matches, unless a deny rule matches them.';
  return 'Block-list: every sender passes except those a deny rule matches.';
}

export function whyInWords(explanation: Pick<AttachmentExplanation, 'reason' | 'matched_rule'>): string {
  const rule = explanation.matched_rule;
  switch (explanation.reason) {
    case 'deny_rule':
      return `The deny rule ${rule?.pattern ?? ''} matches this sender. A deny always wins.`;
    case 'allow_rule':
      return `The allow rule ${rule?.pattern ?? ''} matches this sender.`;
    case 'allow_list_default':
      return 'The gate has allow rules, and none matches this sender.';
    case 'block_list_default':
      return 'The gate has only deny rules, and none matches this sender.';
    case 'no_rules':
      return 'The gate has no rules: every sender passes.';
    case 'no_routing_key':
      return 'The sender has no usable address, and a gate with rules admits no such run.';
    case 'proactive_allowed':
      return 'Allow on scheduled runs is on.';
    case 'proactive_off':
      return 'Allow on scheduled runs is off.';
    case 'catalogue':
      return 'Everything attached, gates ignored.';
  }
}

/** The agent's access rules' verdict on a sender (SEMANTICS §9), in an operator's words. */
export function accessInWords(decision: Pick<AttachmentExplanation, 'admitted' | 'reason' | 'matched_rule'>, agentName: string): string {
  const rule = decision.matched_rule;
  switch (decision.reason) {
    case 'deny_rule':
      return `${agentName}'s access rule deny ${rule?.pattern ?? ''} matches this sender: ${agentName} refuses the message, and nothing is offered.`;
    case 'allow_rule':
      return `${agentName}'s access rule allow ${rule?.pattern ?? ''} matches this sender: ${agentName} handles the message.`;
    case 'allow_list_default':
      return `${agentName} has allow rules and none matches this sender: ${agentName} refuses the message, and nothing is offered.`;
    case 'block_list_default':
      return `${agentName} has only deny rules and none matches this sender: ${agentName} handles the message.`;
    case 'no_routing_key':
      return `The sender has no usable address, and ${agentName} has access rules: ${agentName} refuses the message, and nothing is offered.`;
    default:
      return `${agentName} has no access rules: it handles a message from any sender.`;
  }
}

/** Who an agent's access rules let reach it (SEMANTICS §9), short enough for a list. */
export function accessSummary(rules: readonly Pick<RuleView, 'kind' | 'pattern'>[]): string {
  const allowed = rules.filter((r) => r.kind === 'allow').map((r) => r.pattern);
  const denied = rules.filter((r) => r.kind === 'deny').map((r) => r.pattern);
  if (allowed.length > 0) return `Only ${allowed.join(', ')}${denied.length > 0 ? `, except ${denied.join(', ')}` : ''}`;
  if (denied.length > 0) return `All but ${denied.join(', ')}`;
  return 'Every sender (no access rules)';
}

/** `a`, `a and b`, `a, b and c`. */
export function andList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
