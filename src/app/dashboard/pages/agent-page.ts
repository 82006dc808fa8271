// An agent's page (its toolkits and the attach form, its access rules, its escalation address) and
// the forms on it; a refused form shows the page again with the form as sent, beside its errors.
import type { Request, Response } from 'express';
import { parse, pathId } from '../../../http/parse';
import { ruleSchema, type RuleInput } from '../../../services/attachment-inputs';
import type { DashboardServices, PageHandler } from '../dashboard-services';
import { attempt, pageContext, redirectWith, textField } from '../form-data';
import { previewForm, previewing } from '../form-preview';
import { allowRules } from '../open-gate';
import { renderPage } from '../render';
import { AgentPage } from '../views/agents';
import { NO_TOOLKIT_CHOSEN, type AttachFormValues } from '../views/attach-form';
import type { FieldErrors } from '../views/form';
import type { FormPreview } from '../views/policy-preview';
import type { RuleFormValues } from '../views/rules-table';
import { openGateConfirmation } from './attach-confirmation';
import { accessRuleConfirmation, confirmed } from './removal-confirmation';

/** What an agent's page shows: its status, and a refused form again as sent, beside its errors. */
export interface AgentPageShown {
  status: number;
  attach?: AttachFormValues;
  accessRule?: RuleFormValues;
  accessErrors?: FieldErrors;
  escalation?: { value: string; errors: FieldErrors };
  /** What the access-rules form's Preview showed. */
  accessPreview?: FormPreview;
}

export async function showAgent(d: DashboardServices, req: Request, res: Response, shown: AgentPageShown): Promise<void> {
  const agent = await d.agents.get(pathId(req.params, 'id'));
  const [attachments, accessRules, toolkits] = await Promise.all([
    d.attachments.list(agent.id),
    d.accessRules.list(agent.id),
    d.toolkits.list(),
  ]);
  const toolNames = new Map(d.registry.manifest.list().map((t) => [t.id, t.display_name]));
  renderPage(
    res,
    shown.status,
    AgentPage({
      ctx: pageContext(req),
      agent,
      attachments,
      accessRules,
      toolkits,
      toolNames,
      attach: shown.attach ?? { toolkit_id: '', allow: '', errors: {} },
      accessRule: shown.accessRule ?? { kind: 'allow', pattern: '' },
      accessErrors: shown.accessErrors ?? {},
      escalation: shown.escalation ?? { value: agent.escalation_address ?? '', errors: {} },
      accessPreview: shown.accessPreview,
    }),
  );
}

/** GET /agents/:id */
export const agentPage: PageHandler = (d, req, res) => showAgent(d, req, res, { status: 200 });

/** POST /agents/:id/access-rules: adds a rule, or previews the rules with it. */
export const addAccessRule: PageHandler = async (d, req, res) => {
  const agentId = pathId(req.params, 'id');
  const rule = { kind: textField(req, 'kind'), pattern: textField(req, 'pattern') };
  if (previewing(req)) {
    const [agent, live] = await Promise.all([d.agents.get(agentId), d.accessRules.list(agentId)]);
    const previewed = await previewForm(
      d,
      () => ({
        access_rules: {
          agent_id: agentId,
          rules: [...live.map((r) => ({ kind: r.kind, pattern: r.pattern })), parse(ruleSchema, rule, 'body')],
        },
      }),
      { id: agentId, name: agent.name },
      'pattern',
    );
    if (!previewed.ok) return showAgent(d, req, res, { status: previewed.status, accessRule: rule, accessErrors: previewed.errors });
    return showAgent(d, req, res, { status: 200, accessRule: rule, accessPreview: previewed.preview });
  }
  const result = await attempt(() => d.accessRules.add(agentId, rule as RuleInput), 'pattern');
  // The reason a pattern is refused shows beside "Access pattern", not beside the attach form.
  if (!result.ok) return showAgent(d, req, res, { status: result.status, accessRule: rule, accessErrors: result.errors });
  await redirectWith(req, res, `/agents/${agentId}#access-rules`, `Access rule added: ${result.value.kind} ${result.value.pattern}.`);
};

/** POST /agents/:id/escalation: sets the address the agent copies, or removes it when empty. */
export const saveEscalation: PageHandler = async (d, req, res) => {
  const agentId = pathId(req.params, 'id');
  const value = textField(req, 'escalation_address').trim();
  const result = await attempt(() => d.agents.update(agentId, { escalation_address: value === '' ? null : value }));
  if (!result.ok) return showAgent(d, req, res, { status: result.status, escalation: { value, errors: result.errors } });
  await redirectWith(
    req,
    res,
    `/agents/${agentId}#escalation`,
    value === '' ? 'Escalation address removed: the agent copies no one.' : `Escalation address saved: ${result.value.escalation_address}.`,
  );
};

/** POST /agents/:id/access-rules/:ruleId/delete: the confirmation with its preview, then, confirmed, the removal. */
export const removeAccessRule: PageHandler = async (d, req, res) => {
  const agentId = pathId(req.params, 'id');
  const ruleId = pathId(req.params, 'ruleId');
  if (!confirmed(req)) return renderPage(res, 200, await accessRuleConfirmation(d, req, agentId, ruleId));
  await d.accessRules.delete(agentId, ruleId);
  await redirectWith(req, res, `/agents/${agentId}#access-rules`, 'Access rule removed.');
};

/**
 * POST /agents/:id/toolkits: a toolkit must be chosen, and one that holds gate tools is attached
 * with an open gate only once its confirmation page has been answered (an allow rule given here needs none).
 */
export const attachToolkit: PageHandler = async (d, req, res) => {
  const agentId = pathId(req.params, 'id');
  const form: AttachFormValues = { toolkit_id: textField(req, 'toolkit_id'), allow: textField(req, 'allow'), errors: {} };
  if (form.toolkit_id === '')
    return showAgent(d, req, res, { status: 422, attach: { ...form, errors: { toolkit_id: [NO_TOOLKIT_CHOSEN] } } });
  const rules = allowRules(form.allow);
  if (rules.length === 0) {
    const confirmation = await openGateConfirmation(d, req, agentId);
    if (confirmation) return renderPage(res, 200, confirmation);
  }
  const result = await attempt(() => d.attachments.attach(agentId, { toolkit_id: form.toolkit_id, rules }), 'toolkit_id');
  if (!result.ok) return showAgent(d, req, res, { status: result.status, attach: { ...form, errors: attachErrors(result.errors) } });
  const { toolkit, rules: stored } = result.value;
  await redirectWith(
    req,
    res,
    `/agents/${agentId}/toolkits/${result.value.id}`,
    stored.length === 0
      ? `${toolkit.name} attached with an open gate. Add rules below to limit who unlocks it.`
      : `${toolkit.name} attached: only senders matching ${stored.map((r) => r.pattern).join(', ')} unlock it.`,
  );
};

/** A refused attach's issues: a refused pattern beside Admit only, anything else beside Toolkit. */
function attachErrors(errors: FieldErrors): FieldErrors {
  const { rules, ...rest } = errors;
  return { ...(rules ? { allow: rules } : {}), toolkit_id: Object.values(rest).flat() };
}
