// The gate's verdicts in an operator's words (SEMANTICS §5), for the pages that explain them.
import type { AttachmentExplanation } from '../../core/types';
import type { RuleView } from '../../services/attachments';

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
