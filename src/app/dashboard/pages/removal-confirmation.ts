// The confirmation pages of the one-click removals (SEMANTICS §15): each previews the policy as it
// would stand without the rule, the cap or the attachment, from the live terms, and writes nothing.
import type { Request } from 'express';
import type { VNode } from 'preact';
import { NotFoundError } from '../../../errors';
import type { AttachmentView, CapView, RuleView } from '../../../services/attachments';
import type { DashboardServices } from '../dashboard-services';
import { pageContext, textField } from '../form-data';
import { previewForm } from '../form-preview';
import { openGateGrant } from '../open-gate';
import { andList } from '../views/plain-words';
import { RemovalConfirmationPage, type RemovalPreview } from '../views/removal-confirmation';

/** The field the confirmation page's Remove or Detach sends (views/removal-confirmation.tsx). */
const CONFIRMED_FIELD = 'confirmed';

/** Whether the form was sent from the confirmation page (the Remove or Detach there), not from the list. */
export function confirmed(req: Request): boolean {
  return textField(req, CONFIRMED_FIELD) === 'yes';
}

/** The cap a cap's confirmation showed: caps are removed by their place, which another change may give to another cap. */
export const CAP_FIELD = 'cap';

export function capKey(cap: CapView): string {
  return `${cap.tool_id ?? '*'} ${cap.limit} per ${cap.per} per ${cap.window}`;
}

type Ids = { agentId: number; attachmentId: number };

export async function gateRuleConfirmation(d: DashboardServices, req: Request, ids: Ids, ruleId: number): Promise<VNode> {
  const [agent, attachment] = await Promise.all([d.agents.get(ids.agentId), d.attachments.get(ids.agentId, ids.attachmentId)]);
  const rule = find(attachment.rules, ruleId, `Rule ${ruleId} of attachment ${ids.attachmentId}`);
  const left = attachment.rules.filter((r) => r.id !== ruleId);
  const preview = await removalPreview(
    d,
    () => ({ update: { attachment_id: attachment.id, rules: left.map((r) => ({ kind: r.kind, pattern: r.pattern })) } }),
    agent,
  );
  const here = `${req.baseUrl}/agents/${agent.id}/toolkits/${attachment.id}`;
  return RemovalConfirmationPage({
    ctx: pageContext(req),
    agent,
    title: `Remove the ${rule.kind} rule ${rule.pattern}?`,
    lead: `From the sender gate of ${attachment.toolkit.name}, attached to ${agent.name}.`,
    opens: opens(rule, left) ? gateOpening(d, attachment, left) : null,
    preview,
    action: `${here}/rules/${rule.id}/delete`,
    confirm: 'Remove',
    cancelHref: `${here}#gate`,
  });
}

export async function accessRuleConfirmation(d: DashboardServices, req: Request, agentId: number, ruleId: number): Promise<VNode> {
  const [agent, rules] = await Promise.all([d.agents.get(agentId), d.accessRules.list(agentId)]);
  const rule = find(rules, ruleId, `Access rule ${ruleId} of agent ${agentId}`);
  const left = rules.filter((r) => r.id !== ruleId);
  const preview = await removalPreview(
    d,
    () => ({ access_rules: { agent_id: agentId, rules: left.map((r) => ({ kind: r.kind, pattern: r.pattern })) } }),
    agent,
  );
  const denied = left.map((r) => r.pattern);
  // Access rules with no allow rule left admit every sender they do not deny, and none admit all (SEMANTICS §9).
  const opening = opens(rule, left)
    ? `Every sender${denied.length > 0 ? ` but those matching ${andList(denied)}` : ''} would reach ${agent.name}: with no allow rule left, its access rules admit anyone they do not deny.`
    : null;
  return RemovalConfirmationPage({
    ctx: pageContext(req),
    agent,
    title: `Remove the access rule ${rule.kind} ${rule.pattern}?`,
    lead: `From ${agent.name}'s access rules, which decide whose messages it handles at all.`,
    opens: opening,
    preview,
    action: `${req.baseUrl}/agents/${agent.id}/access-rules/${rule.id}/delete`,
    confirm: 'Remove',
    cancelHref: `${req.baseUrl}/agents/${agent.id}#access-rules`,
  });
}

export async function detachConfirmation(d: DashboardServices, req: Request, ids: Ids): Promise<VNode> {
  const [agent, attachment] = await Promise.all([d.agents.get(ids.agentId), d.attachments.get(ids.agentId, ids.attachmentId)]);
  const preview = await removalPreview(d, () => ({ detach: { attachment_id: attachment.id } }), agent);
  const here = `${req.baseUrl}/agents/${agent.id}/toolkits/${attachment.id}`;
  return RemovalConfirmationPage({
    ctx: pageContext(req),
    agent,
    title: `Detach ${attachment.toolkit.name} from ${agent.name}?`,
    lead: `The grant goes for every sender and scheduled run of ${agent.name} at once, with its gate rules, caps and approval terms. The toolkit itself stays.`,
    opens: null,
    preview,
    action: `${here}/detach`,
    confirm: 'Detach',
    cancelHref: `${here}#detach`,
  });
}

export async function capConfirmation(d: DashboardServices, req: Request, ids: Ids, index: number): Promise<VNode> {
  const [agent, attachment] = await Promise.all([d.agents.get(ids.agentId), d.attachments.get(ids.agentId, ids.attachmentId)]);
  const cap = attachment.caps[index];
  // A place that holds no cap (a stale page, a made-up link) has nothing to confirm, and says so.
  if (!Number.isInteger(index) || cap === undefined) throw new NotFoundError(`Cap ${index} of attachment ${ids.attachmentId}`);
  const left = attachment.caps.filter((_cap, i) => i !== index);
  const preview = await removalPreview(d, () => ({ update: { attachment_id: attachment.id, caps: left } }), agent);
  const freed = uncapped(cap, left, attachment.toolkit.member_tool_ids);
  const here = `${req.baseUrl}/agents/${agent.id}/toolkits/${attachment.id}`;
  const tools = freed.length === 1 ? 'it' : 'them';
  const calls = cap.limit === 1 ? 'call' : 'calls';
  return RemovalConfirmationPage({
    ctx: pageContext(req),
    agent,
    title: `Remove the cap of ${cap.limit} ${cap.tool_id === null ? `${calls} of its tools` : `${cap.tool_id} ${calls}`} per ${cap.per} per ${cap.window}?`,
    lead: `From the caps of ${attachment.toolkit.name}, attached to ${agent.name}.`,
    opens:
      freed.length > 0
        ? `${andList(freed)} would have no limit for ${agent.name}: with no cap of ${attachment.toolkit.name} left on ${tools}, ${freed.length === 1 ? 'its' : 'their'} calls would run as often as they are asked.`
        : null,
    preview,
    action: `${here}/caps/${index}/delete`,
    confirm: 'Remove',
    cancelHref: `${here}#caps`,
    fields: { [CAP_FIELD]: capKey(cap) },
  });
}

/** The members `cap` bounds that no cap left would: a cap of all members binds every one of them. */
function uncapped(cap: CapView, left: CapView[], members: readonly string[]): string[] {
  if (left.some((c) => c.tool_id === null)) return [];
  const bound = cap.tool_id === null ? members : [cap.tool_id];
  return bound.filter((id) => !left.some((c) => c.tool_id === id)).sort();
}

/**
 * Whether removing `rule` opens the list to senders it shuts out now: the last allow rule goes (an
 * allow-list becomes a block-list, or nothing), or the last rule of all (a block-list becomes open).
 */
function opens(rule: RuleView, left: RuleView[]): boolean {
  if (left.some((r) => r.kind === 'allow')) return false;
  return rule.kind === 'allow' || left.length === 0;
}

function find(rules: RuleView[], id: number, what: string): RuleView {
  const rule = rules.find((r) => r.id === id);
  // A stale page or a made-up link names no rule of this list: nothing to confirm, and it says so.
  if (rule === undefined) throw new NotFoundError(what);
  return rule;
}

async function removalPreview(
  d: DashboardServices,
  change: Parameters<typeof previewForm>[1],
  agent: { id: number; name: string },
): Promise<RemovalPreview> {
  const result = await previewForm(d, change, { id: agent.id, name: agent.name }, 'change');
  return result.ok ? result : { ok: false, errors: result.errors };
}

/** A gate left with no allow rule: who it would give its gate tools to, in plain words. */
function gateOpening(d: DashboardServices, attachment: AttachmentView, left: RuleView[]): string {
  const gate = openGateGrant(attachment.toolkit, d.registry.manifest)
    .gate.map((t) => t.id)
    .sort();
  const tools = gate.length > 0 ? andList(gate) : `the tools of ${attachment.toolkit.name}`;
  const denied = left.map((r) => r.pattern);
  return denied.length === 0
    ? `Every sender would get ${tools}, on every message: with no rule left, the gate is open and checks no one.`
    : `Every sender but those matching ${andList(denied)} would get ${tools}: with no allow rule left, the gate admits anyone its deny rules do not match.`;
}
