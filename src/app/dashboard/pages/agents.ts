// Agents: the list, an agent's page (Agent Toolkits and the attach form), and each attachment's
// Configure Access Settings page (gate rules, Allow on scheduled runs, detach). Each form that
// changes a policy has a Preview beside its Save (SEMANTICS §15): the same form, previewed, not saved;
// a gate rule's, an access rule's or a cap's Remove, and Detach, show their preview on a confirmation page first.
import { Router, type Request, type Response } from 'express';
import { windowText } from '../../../core/cap-window';
import { ConflictError, NotFoundError } from '../../../errors';
import { parse, pathId } from '../../../http/parse';
import { attachmentPatchSchema, capInputSchema, ruleSchema, type RuleInput } from '../../../services/inputs';
import type { DashboardServices } from '../dashboard-services';
import { attempt, checkedField, listField, pageContext, queryText, redirectWith, textField } from '../form-data';
import { allowRules } from '../open-gate';
import { renderPage } from '../render';
import { accessRulesByAgent, toolkitNamesByAgent } from '../usage';
import { AgentFormPage, type AgentFormValues } from '../views/agent-form';
import { AgentPage, AgentsPage } from '../views/agents';
import { NO_TOOLKIT_CHOSEN, type AttachFormValues } from '../views/attach-form';
import { AttachmentPage, type ApprovalFormValues, type CapFormValues } from '../views/attachment';
import { CandidatePage } from '../views/candidate';
import type { AttachmentPatch } from '../../../services/inputs';
import type { AttachmentView } from '../../../services/attachments';
import type { RuleFormValues } from '../views/rules-table';
import type { FieldErrors } from '../views/form';
import { openGateConfirmation } from './attach-confirmation';
import {
  accessRuleConfirmation,
  CAP_FIELD,
  capConfirmation,
  capKey,
  CONFIRMED_FIELD,
  detachConfirmation,
  gateRuleConfirmation,
} from './removal-confirmation';
import { PREVIEW_FIELD, previewForm } from '../form-preview';
import type { FormPreview } from '../views/policy-preview';
import type { TermsForm } from '../views/attachment';

/** How many agents a page of the list shows. */
export const AGENTS_PER_PAGE = 50;

/** What an agent's page shows again after a refused form: that form as sent, beside its errors. */
interface AgentPageForms {
  attach?: AttachFormValues;
  accessRule?: RuleFormValues;
  accessErrors?: FieldErrors;
  escalation?: { value: string; errors: FieldErrors };
  /** What the access-rules form's Preview showed. */
  accessPreview?: FormPreview;
}

/** What Configure Access Settings shows again beside a form sent by its Preview. */
interface AttachmentShown {
  preview?: { form: TermsForm; result: FormPreview };
  scheduled?: boolean;
}

export function agentPages(d: DashboardServices): Router {
  const router = Router();
  const ids = (req: Request) => ({ agentId: pathId(req.params, 'id'), attachmentId: pathId(req.params, 'attachmentId') });
  const previewing = (req: Request) => textField(req, PREVIEW_FIELD) === 'yes';

  const showAgent = async (req: Request, res: Response, status: number, forms: AgentPageForms = {}) => {
    const agent = await d.agents.get(pathId(req.params, 'id'));
    const [attachments, accessRules, toolkits] = await Promise.all([
      d.attachments.list(agent.id),
      d.accessRules.list(agent.id),
      d.toolkits.list(),
    ]);
    const toolNames = new Map(d.registry.manifest.list().map((t) => [t.id, t.display_name]));
    renderPage(
      res,
      status,
      AgentPage({
        ctx: pageContext(req),
        agent,
        attachments,
        accessRules,
        toolkits,
        toolNames,
        attach: forms.attach ?? { toolkit_id: '', allow: '', errors: {} },
        accessRule: forms.accessRule ?? { kind: 'allow', pattern: '' },
        accessErrors: forms.accessErrors ?? {},
        escalation: forms.escalation ?? { value: agent.escalation_address ?? '', errors: {} },
        accessPreview: forms.accessPreview,
      }),
    );
  };

  const showAttachment = async (
    req: Request,
    res: Response,
    status: number,
    rule: RuleFormValues,
    errors: FieldErrors,
    approval?: ApprovalFormValues,
    cap?: { values: CapFormValues; errors: FieldErrors },
    shown: AttachmentShown = {},
  ) => {
    const { agentId, attachmentId } = ids(req);
    const [agent, attachment] = await Promise.all([d.agents.get(agentId), d.attachments.get(agentId, attachmentId)]);
    const approvalForm = approval ?? {
      required: attachment.approval !== null,
      approvers: (attachment.approval?.approvers ?? []).join('\n'),
      errors: {},
    };
    const capForm = cap ?? { values: { tool_id: '', per: 'sender', limit: '', window: '1d' }, errors: {} };
    const toolNames = new Map(d.registry.manifest.list().map((t) => [t.id, t.display_name]));
    renderPage(
      res,
      status,
      AttachmentPage({
        ctx: pageContext(req),
        agent,
        attachment,
        rule,
        errors,
        approval: approvalForm,
        cap: capForm,
        toolNames,
        ...shown,
      }),
    );
  };

  // A page of agents by name, with a search by the beginning of a name: it reads the page's rows
  // and their attachments and rules, never every agent.
  router.get('/agents', async (req, res) => {
    const name = queryText(req, 'name').trim().slice(0, 200);
    const after = queryText(req, 'after');
    const page = await d.agents.page({ limit: AGENTS_PER_PAGE, ...(name ? { name } : {}), ...(after ? { after } : {}) });
    const ids = page.agents.map((a) => a.id);
    const [toolkitsByAgent, rulesByAgent] = await Promise.all([
      toolkitNamesByAgent(d.sequelize, ids),
      accessRulesByAgent(d.sequelize, ids),
    ]);
    renderPage(
      res,
      200,
      AgentsPage({
        ctx: pageContext(req),
        agents: page.agents,
        toolkitsByAgent,
        accessRulesByAgent: rulesByAgent,
        search: name,
        next: page.next,
        first: after === '',
      }),
    );
  });

  const showNewAgent = async (req: Request, res: Response, status: number, values: AgentFormValues, errors: FieldErrors) => {
    const toolNames = new Map(d.registry.manifest.list().map((t) => [t.id, t.display_name]));
    renderPage(res, status, AgentFormPage({ ctx: pageContext(req), toolkits: await d.toolkits.list(), toolNames, values, errors }));
  };

  router.get('/agents/new', async (req, res) => {
    const defaults = (await d.toolkits.list()).filter((t) => t.system_key === 'default_tools').map((t) => String(t.id));
    await showNewAgent(req, res, 200, { name: '', description: '', toolkitIds: defaults }, {});
  });

  router.post('/agents', async (req, res) => {
    const values = { name: textField(req, 'name'), description: textField(req, 'description'), toolkitIds: listField(req, 'toolkit') };
    const result = await attempt(() =>
      d.agents.create({ name: values.name, description: values.description || null, toolkit_ids: values.toolkitIds }),
    );
    if (!result.ok) return showNewAgent(req, res, result.status, values, result.errors);
    await redirectWith(req, res, `/agents/${result.value.id}`, `Agent ${result.value.name} created.`);
  });

  router.get('/agents/:id', (req, res) => showAgent(req, res, 200));

  router.post('/agents/:id/access-rules', async (req, res) => {
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
      if (!previewed.ok) return showAgent(req, res, previewed.status, { accessRule: rule, accessErrors: previewed.errors });
      return showAgent(req, res, 200, { accessRule: rule, accessPreview: previewed.preview });
    }
    const result = await attempt(() => d.accessRules.add(agentId, rule as RuleInput), 'pattern');
    // The reason a pattern is refused shows beside "Access pattern", not beside the attach form.
    if (!result.ok) return showAgent(req, res, result.status, { accessRule: rule, accessErrors: result.errors });
    await redirectWith(req, res, `/agents/${agentId}#access-rules`, `Access rule added: ${result.value.kind} ${result.value.pattern}.`);
  });

  router.post('/agents/:id/escalation', async (req, res) => {
    const agentId = pathId(req.params, 'id');
    const value = textField(req, 'escalation_address').trim();
    const result = await attempt(() => d.agents.update(agentId, { escalation_address: value === '' ? null : value }));
    if (!result.ok) return showAgent(req, res, result.status, { escalation: { value, errors: result.errors } });
    await redirectWith(
      req,
      res,
      `/agents/${agentId}#escalation`,
      value === ''
        ? 'Escalation address removed: the agent copies no one.'
        : `Escalation address saved: ${result.value.escalation_address}.`,
    );
  });

  // An access rule's, a gate rule's and a cap's Remove, and Detach, each lead to a confirmation page
  // with their preview; only its own Remove or Detach, sent back here with `confirmed`, makes the change.
  const confirmed = (req: Request) => textField(req, CONFIRMED_FIELD) === 'yes';

  router.post('/agents/:id/access-rules/:ruleId/delete', async (req, res) => {
    const agentId = pathId(req.params, 'id');
    const ruleId = pathId(req.params, 'ruleId');
    if (!confirmed(req)) return renderPage(res, 200, await accessRuleConfirmation(d, req, agentId, ruleId));
    await d.accessRules.delete(agentId, ruleId);
    await redirectWith(req, res, `/agents/${agentId}#access-rules`, 'Access rule removed.');
  });

  // Attach: a toolkit must be chosen, and one that holds gate tools is attached with an open gate
  // only once its confirmation page has been answered (an allow rule given here needs none).
  router.post('/agents/:id/toolkits', async (req, res) => {
    const agentId = pathId(req.params, 'id');
    const form: AttachFormValues = { toolkit_id: textField(req, 'toolkit_id'), allow: textField(req, 'allow'), errors: {} };
    if (form.toolkit_id === '') return showAgent(req, res, 422, { attach: { ...form, errors: { toolkit_id: [NO_TOOLKIT_CHOSEN] } } });
    const rules = allowRules(form.allow);
    if (rules.length === 0) {
      const confirmation = await openGateConfirmation(d, req, agentId);
      if (confirmation) return renderPage(res, 200, confirmation);
    }
    const result = await attempt(() => d.attachments.attach(agentId, { toolkit_id: form.toolkit_id, rules }), 'toolkit_id');
    if (!result.ok) return showAgent(req, res, result.status, { attach: { ...form, errors: attachErrors(result.errors) } });
    const { toolkit, rules: stored } = result.value;
    await redirectWith(
      req,
      res,
      `/agents/${agentId}/toolkits/${result.value.id}`,
      stored.length === 0
        ? `${toolkit.name} attached with an open gate. Add rules below to limit who unlocks it.`
        : `${toolkit.name} attached: only senders matching ${stored.map((r) => r.pattern).join(', ')} unlock it.`,
    );
  });

  router.get('/agents/:id/toolkits/:attachmentId', (req, res) => showAttachment(req, res, 200, { kind: 'allow', pattern: '' }, {}));

  // "Try as candidate" beside a form's Save: the form's terms become the attachment's candidate
  // (with what the candidate already held), tried on live traffic before they are live (SEMANTICS §15).
  const tryCandidate = async (req: Request, res: Response, terms: (attachment: AttachmentView) => AttachmentPatch) => {
    const { agentId, attachmentId } = ids(req);
    const attachment = await d.attachments.get(agentId, attachmentId);
    const result = await attempt(() =>
      d.attachments.setCandidate(agentId, attachmentId, { ...candidateInput(attachment), ...terms(attachment) }),
    );
    if (!result.ok) return { ok: false as const, status: result.status, errors: result.errors };
    await redirectWith(
      req,
      res,
      `/agents/${agentId}/toolkits/${attachmentId}/candidate`,
      'Candidate terms set: the live terms still decide every run, and the records say where these would decide otherwise.',
    );
    return { ok: true as const };
  };
  const trying = (req: Request) => textField(req, 'try') === 'candidate';

  // Preview beside a form's Save on Configure Access Settings: the terms Save would write, checked
  // as Save checks them and previewed as a change of this attachment. `show` renders the page with
  // the form as sent: beside its errors, or with the preview's answer in it.
  const previewTerms = async (
    req: Request,
    form: TermsForm,
    terms: (attachment: AttachmentView) => AttachmentPatch,
    show: (status: number, errors: FieldErrors, preview?: { form: TermsForm; result: FormPreview }) => Promise<void>,
  ) => {
    const { agentId, attachmentId } = ids(req);
    const [agent, attachment] = await Promise.all([d.agents.get(agentId), d.attachments.get(agentId, attachmentId)]);
    const previewed = await previewForm(
      d,
      () => {
        const given = terms(attachment);
        parse(attachmentPatchSchema, given, 'body');
        return { update: { attachment_id: attachmentId, ...given } };
      },
      { id: agentId, name: agent.name },
      PREVIEW_REFUSAL_FIELD[form],
    );
    if (!previewed.ok) return show(previewed.status, previewed.errors);
    return show(200, {}, { form, result: previewed.preview });
  };

  router.get('/agents/:id/toolkits/:attachmentId/candidate', async (req, res) => {
    const { agentId, attachmentId } = ids(req);
    const [agent, view] = await Promise.all([d.agents.get(agentId), d.attachments.candidate(agentId, attachmentId)]);
    renderPage(res, 200, CandidatePage({ ctx: pageContext(req), agent, view }));
  });

  router.post('/agents/:id/toolkits/:attachmentId/candidate/promote', async (req, res) => {
    const { agentId, attachmentId } = ids(req);
    const attachment = await d.attachments.promote(agentId, attachmentId);
    await redirectWith(
      req,
      res,
      `/agents/${agentId}/toolkits/${attachmentId}`,
      `Promoted: the candidate is ${attachment.toolkit.name}'s live terms now. ${gateWords(attachment)}`,
    );
  });

  router.post('/agents/:id/toolkits/:attachmentId/candidate/drop', async (req, res) => {
    const { agentId, attachmentId } = ids(req);
    await d.attachments.dropCandidate(agentId, attachmentId);
    await redirectWith(req, res, `/agents/${agentId}/toolkits/${attachmentId}`, 'Candidate dropped: the live terms are as they were.');
  });

  router.post('/agents/:id/toolkits/:attachmentId', async (req, res) => {
    const { agentId, attachmentId } = ids(req);
    const allow = checkedField(req, 'allow_proactive');
    if (previewing(req))
      return previewTerms(
        req,
        'scheduled',
        () => ({ allow_proactive: allow }),
        (status, errors, preview) =>
          showAttachment(req, res, status, { kind: 'allow', pattern: '' }, errors, undefined, undefined, { preview, scheduled: allow }),
      );
    if (trying(req)) {
      const tried = await tryCandidate(req, res, () => ({ allow_proactive: allow }));
      if (!tried.ok) return showAttachment(req, res, tried.status, { kind: 'allow', pattern: '' }, tried.errors);
      return;
    }
    const attachment = await d.attachments.update(agentId, attachmentId, { allow_proactive: allow });
    await redirectWith(
      req,
      res,
      `/agents/${agentId}/toolkits/${attachmentId}`,
      `Saved: ${attachment.toolkit.name} is ${allow ? 'offered to' : 'kept from'} scheduled runs.`,
    );
  });

  // Approval terms: required or not, and the approver patterns, one per line. A changed list voids
  // the attachment's pending requests, which the page says.
  router.post('/agents/:id/toolkits/:attachmentId/approval', async (req, res) => {
    const { agentId, attachmentId } = ids(req);
    const required = checkedField(req, 'require_approval');
    const text = textField(req, 'approval');
    const approvers = text
      .split(/[\n,]/)
      .map((line) => line.trim())
      .filter((line) => line !== '');
    if (previewing(req))
      return previewTerms(
        req,
        'approval',
        () => ({ approval: required ? { approvers } : null }),
        (status, errors, preview) =>
          showAttachment(req, res, status, { kind: 'allow', pattern: '' }, {}, { required, approvers: text, errors }, undefined, {
            preview,
          }),
      );
    if (trying(req)) {
      const tried = await tryCandidate(req, res, () => ({ approval: required ? { approvers } : null }));
      if (tried.ok) return;
      return showAttachment(
        req,
        res,
        tried.status,
        { kind: 'allow', pattern: '' },
        {},
        { required, approvers: text, errors: tried.errors },
      );
    }
    const before = (await d.attachments.get(agentId, attachmentId)).approval;
    const result = await attempt(() => d.attachments.update(agentId, attachmentId, { approval: required ? { approvers } : null }));
    if (!result.ok)
      return showAttachment(
        req,
        res,
        result.status,
        { kind: 'allow', pattern: '' },
        {},
        { required, approvers: text, errors: result.errors },
      );
    const terms = result.value.approval;
    const words =
      terms === null
        ? 'its tools run without approval'
        : terms.approvers.length === 0
          ? 'only an operator approves its tools'
          : `approvers: ${terms.approvers.join(', ')}`;
    // Only a change of terms voids what is pending (the database's trigger compares them likewise).
    const voided = JSON.stringify(before) !== JSON.stringify(terms) ? ' Requests pending under the old terms are void.' : '';
    await redirectWith(req, res, `/agents/${agentId}/toolkits/${attachmentId}#approval`, `Saved: ${words}.${voided}`);
  });

  // Caps: added one at a time, removed by their place in the list; the list is written whole.
  router.post('/agents/:id/toolkits/:attachmentId/caps', async (req, res) => {
    const { agentId, attachmentId } = ids(req);
    const attachment = await d.attachments.get(agentId, attachmentId);
    const cap: CapFormValues = {
      tool_id: textField(req, 'tool_id'),
      per: textField(req, 'per'),
      limit: textField(req, 'limit'),
      window: textField(req, 'window'),
    };
    const added = { tool_id: cap.tool_id === '' ? null : cap.tool_id, per: cap.per, limit: Number(cap.limit), window: cap.window };
    const showCap = (status: number, errors: FieldErrors, preview?: AttachmentShown['preview']) =>
      showAttachment(
        req,
        res,
        status,
        { kind: 'allow', pattern: '' },
        {},
        undefined,
        { values: cap, errors: capErrors(errors) },
        { preview },
      );
    // As Save, the new cap is read on its own first, so a refusal names its field.
    const withAdded = (caps: NonNullable<AttachmentPatch['caps']>) => {
      const checked = parse(capInputSchema, added, 'body');
      return [...caps, { ...added, per: checked.per }];
    };
    if (previewing(req)) return previewTerms(req, 'cap', (a) => ({ caps: withAdded(a.caps) }), showCap);
    if (trying(req)) {
      const tried = await tryCandidate(req, res, (a) => ({ caps: withAdded(a.candidate?.caps ?? a.caps) }));
      if (!tried.ok) return showCap(tried.status, tried.errors);
      return;
    }
    // The new cap is read on its own first, so a refusal names its field (window, limit).
    const result = await attempt(async () => {
      const checked = parse(capInputSchema, added, 'body');
      await d.attachments.update(agentId, attachmentId, { caps: [...attachment.caps, { ...added, per: checked.per }] });
      return checked;
    });
    if (!result.ok)
      return showAttachment(req, res, result.status, { kind: 'allow', pattern: '' }, {}, undefined, {
        values: cap,
        errors: capErrors(result.errors),
      });
    const { tool_id, per, limit, window_s } = result.value;
    await redirectWith(
      req,
      res,
      `/agents/${agentId}/toolkits/${attachmentId}#caps`,
      `Cap added: at most ${limit} ${tool_id ?? 'calls of its tools'}${tool_id ? ' calls' : ''} per ${per} per ${windowText(window_s)}.`,
    );
  });

  router.post('/agents/:id/toolkits/:attachmentId/caps/:index/delete', async (req, res) => {
    const { agentId, attachmentId } = ids(req);
    const index = Number(req.params.index);
    if (!confirmed(req)) return renderPage(res, 200, await capConfirmation(d, req, { agentId, attachmentId }, index));
    const attachment = await d.attachments.get(agentId, attachmentId);
    // A place that holds no cap (a stale page, a made-up link) removes nothing, and says so.
    if (!Number.isInteger(index) || index < 0 || index >= attachment.caps.length)
      throw new NotFoundError(`Cap ${String(req.params.index)} of attachment ${attachmentId}`);
    // The confirmation names the cap it showed; if another now holds its place, removing it would remove what was not shown.
    const shown = textField(req, CAP_FIELD);
    if (shown !== '' && shown !== capKey(attachment.caps[index]!))
      throw new ConflictError('The caps changed since this removal was shown, so nothing was removed: look at them again.');
    await d.attachments.update(agentId, attachmentId, { caps: attachment.caps.filter((_cap, i) => i !== index) });
    await redirectWith(req, res, `/agents/${agentId}/toolkits/${attachmentId}#caps`, 'Cap removed.');
  });

  router.post('/agents/:id/toolkits/:attachmentId/rules', async (req, res) => {
    const { agentId, attachmentId } = ids(req);
    const rule = { kind: textField(req, 'kind'), pattern: textField(req, 'pattern') };
    if (previewing(req))
      return previewTerms(
        req,
        'rule',
        (a) => ({ rules: [...a.rules.map((r) => ({ kind: r.kind, pattern: r.pattern })), parse(ruleSchema, rule, 'body')] }),
        (status, errors, preview) => showAttachment(req, res, status, rule, errors, undefined, undefined, { preview }),
      );
    if (trying(req)) {
      const tried = await tryCandidate(req, res, (a) => ({
        rules: [...(a.candidate?.rules ?? a.rules.map((r) => ({ kind: r.kind, pattern: r.pattern }))), rule as RuleInput],
      }));
      if (tried.ok) return;
      return showAttachment(req, res, tried.status, rule, candidateRuleErrors(tried.errors));
    }
    // The service parses the rule: a kind other than allow or deny comes back beside Kind.
    const result = await attempt(() => d.attachments.addRule(agentId, attachmentId, rule as RuleInput), 'pattern');
    if (!result.ok) return showAttachment(req, res, result.status, rule, result.errors);
    await redirectWith(
      req,
      res,
      `/agents/${agentId}/toolkits/${attachmentId}`,
      `Rule added: ${result.value.kind} ${result.value.pattern}.`,
    );
  });

  router.post('/agents/:id/toolkits/:attachmentId/rules/:ruleId/delete', async (req, res) => {
    const { agentId, attachmentId } = ids(req);
    const ruleId = pathId(req.params, 'ruleId');
    if (!confirmed(req)) return renderPage(res, 200, await gateRuleConfirmation(d, req, { agentId, attachmentId }, ruleId));
    await d.attachments.deleteRule(agentId, attachmentId, ruleId);
    await redirectWith(req, res, `/agents/${agentId}/toolkits/${attachmentId}`, 'Rule removed.');
  });

  router.post('/agents/:id/toolkits/:attachmentId/detach', async (req, res) => {
    const { agentId, attachmentId } = ids(req);
    if (!confirmed(req)) return renderPage(res, 200, await detachConfirmation(d, req, { agentId, attachmentId }));
    const attachment = await d.attachments.get(agentId, attachmentId);
    await d.attachments.detach(agentId, attachmentId);
    await redirectWith(
      req,
      res,
      `/agents/${agentId}`,
      `${attachment.toolkit.name} detached: its tools and rules no longer apply to this agent.`,
    );
  });
  return router;
}

/** Where a form's preview puts what the preview itself refused (what Save's checks refuse names its own field). */
const PREVIEW_REFUSAL_FIELD: Record<TermsForm, string> = { rule: 'pattern', approval: 'approval', cap: 'tool_id', scheduled: 'form' };

/** A refused attach's issues: a refused pattern beside Admit only, anything else beside Toolkit. */
function attachErrors(errors: FieldErrors): FieldErrors {
  const { rules, ...rest } = errors;
  return { ...(rules ? { allow: rules } : {}), toolkit_id: Object.values(rest).flat() };
}

/** A refused cap's issues beside their fields: the service's check of the list (`caps`) names a tool. */
function capErrors(errors: FieldErrors): FieldErrors {
  return Object.fromEntries(Object.entries(errors).map(([field, messages]) => [field === 'caps' ? 'tool_id' : field, messages]));
}

/** The candidate an attachment already carries, as PUT takes it: a form tried as candidate adds to it. */
function candidateInput(attachment: AttachmentView): AttachmentPatch {
  const c = attachment.candidate;
  if (c === undefined) return {};
  return {
    ...(c.rules !== undefined ? { rules: c.rules } : {}),
    ...(c.caps !== undefined ? { caps: c.caps } : {}),
    ...(c.approval !== undefined ? { approval: c.approval } : {}),
    ...(c.allow_proactive !== undefined ? { allow_proactive: c.allow_proactive } : {}),
  };
}

/** A refused candidate rule's issues beside the rule form's fields: the list's positions are the form's one rule. */
function candidateRuleErrors(errors: FieldErrors): FieldErrors {
  return Object.fromEntries(Object.entries(errors).map(([field, messages]) => [field === 'rules' ? 'pattern' : field, messages]));
}

function gateWords(attachment: AttachmentView): string {
  const rules = attachment.rules.map((r) => `${r.kind} ${r.pattern}`);
  return rules.length === 0 ? 'Its gate is open.' : `Its gate rules: ${rules.join(', ')}.`;
}
