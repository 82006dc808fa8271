// The forms of Configure Access Settings, one handler each: Allow on scheduled runs, approval, caps
// and gate rules. Each saves, previews or tries its terms as candidate; a Remove confirms first.
import { windowText } from '../../../core/cap-window';
import { ConflictError, NotFoundError } from '../../../errors';
import { parse, pathId } from '../../../http/parse';
import { capInputSchema, ruleSchema, type AttachmentPatch, type RuleInput } from '../../../services/attachment-inputs';
import type { PageHandler } from '../dashboard-services';
import { attempt, checkedField, redirectWith, textField } from '../form-data';
import { previewing } from '../form-preview';
import { renderPage } from '../render';
import type { CapFormValues } from '../views/attachment';
import type { FieldErrors } from '../views/form';
import { attachmentIds, showAttachment } from './attachment-page';
import { previewTerms, tryCandidate, trying, type ShowTermsForm } from './attachment-terms';
import { CAP_FIELD, capConfirmation, capKey, confirmed, gateRuleConfirmation } from './removal-confirmation';

/** POST /agents/:id/toolkits/:attachmentId: Allow on scheduled runs. */
export const saveScheduled: PageHandler = async (d, req, res) => {
  const { agentId, attachmentId } = attachmentIds(req);
  const allow = checkedField(req, 'allow_proactive');
  if (previewing(req))
    return previewTerms(d, req, {
      form: 'scheduled',
      terms: () => ({ allow_proactive: allow }),
      show: ({ status, errors, preview }) => showAttachment(d, req, res, { status, errors, preview, scheduled: allow }),
    });
  if (trying(req)) {
    const tried = await tryCandidate(d, req, res, () => ({ allow_proactive: allow }));
    if (!tried.ok) return showAttachment(d, req, res, { status: tried.status, errors: tried.errors });
    return;
  }
  const attachment = await d.attachments.update(agentId, attachmentId, { allow_proactive: allow });
  await redirectWith(
    req,
    res,
    `/agents/${agentId}/toolkits/${attachmentId}`,
    `Saved: ${attachment.toolkit.name} is ${allow ? 'offered to' : 'kept from'} scheduled runs.`,
  );
};

/**
 * POST /agents/:id/toolkits/:attachmentId/approval: required or not, and the approver patterns, one
 * per line. A changed list voids the attachment's pending requests, which the page says.
 */
export const saveApproval: PageHandler = async (d, req, res) => {
  const { agentId, attachmentId } = attachmentIds(req);
  const required = checkedField(req, 'require_approval');
  const text = textField(req, 'approval');
  const approvers = text
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const showApproval: ShowTermsForm = ({ status, errors, preview }) =>
    showAttachment(d, req, res, { status, approval: { required, approvers: text, errors }, preview });
  if (previewing(req))
    return previewTerms(d, req, { form: 'approval', terms: () => ({ approval: required ? { approvers } : null }), show: showApproval });
  if (trying(req)) {
    const tried = await tryCandidate(d, req, res, () => ({ approval: required ? { approvers } : null }));
    if (tried.ok) return;
    return showApproval({ status: tried.status, errors: tried.errors });
  }
  const before = (await d.attachments.get(agentId, attachmentId)).approval;
  const result = await attempt(() => d.attachments.update(agentId, attachmentId, { approval: required ? { approvers } : null }));
  if (!result.ok) return showApproval({ status: result.status, errors: result.errors });
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
};

/** POST /agents/:id/toolkits/:attachmentId/caps: caps are added one at a time; the list is written whole. */
export const addCap: PageHandler = async (d, req, res) => {
  const { agentId, attachmentId } = attachmentIds(req);
  const attachment = await d.attachments.get(agentId, attachmentId);
  const cap: CapFormValues = {
    tool_id: textField(req, 'tool_id'),
    per: textField(req, 'per'),
    limit: textField(req, 'limit'),
    window: textField(req, 'window'),
  };
  const added = { tool_id: cap.tool_id === '' ? null : cap.tool_id, per: cap.per, limit: Number(cap.limit), window: cap.window };
  const showCap: ShowTermsForm = ({ status, errors, preview }) =>
    showAttachment(d, req, res, { status, cap: { values: cap, errors: capErrors(errors) }, preview });
  // As Save, the new cap is read on its own first, so a refusal names its field.
  const withAdded = (caps: NonNullable<AttachmentPatch['caps']>) => {
    const checked = parse(capInputSchema, added, 'body');
    return [...caps, { ...added, per: checked.per }];
  };
  if (previewing(req)) return previewTerms(d, req, { form: 'cap', terms: (a) => ({ caps: withAdded(a.caps) }), show: showCap });
  if (trying(req)) {
    const tried = await tryCandidate(d, req, res, (a) => ({ caps: withAdded(a.candidate?.caps ?? a.caps) }));
    if (!tried.ok) return showCap({ status: tried.status, errors: tried.errors });
    return;
  }
  // The new cap is read on its own first, so a refusal names its field (window, limit).
  const result = await attempt(async () => {
    const checked = parse(capInputSchema, added, 'body');
    await d.attachments.update(agentId, attachmentId, { caps: [...attachment.caps, { ...added, per: checked.per }] });
    return checked;
  });
  if (!result.ok) return showAttachment(d, req, res, { status: result.status, cap: { values: cap, errors: capErrors(result.errors) } });
  const { tool_id, per, limit, window_s } = result.value;
  await redirectWith(
    req,
    res,
    `/agents/${agentId}/toolkits/${attachmentId}#caps`,
    `Cap added: at most ${limit} ${tool_id ?? 'calls of its tools'}${tool_id ? ' calls' : ''} per ${per} per ${windowText(window_s)}.`,
  );
};

/** POST /agents/:id/toolkits/:attachmentId/caps/:index/delete: a cap is removed by its place in the list. */
export const removeCap: PageHandler = async (d, req, res) => {
  const { agentId, attachmentId } = attachmentIds(req);
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
};

/** POST /agents/:id/toolkits/:attachmentId/rules: a gate rule. */
export const addGateRule: PageHandler = async (d, req, res) => {
  const { agentId, attachmentId } = attachmentIds(req);
  const rule = { kind: textField(req, 'kind'), pattern: textField(req, 'pattern') };
  if (previewing(req))
    return previewTerms(d, req, {
      form: 'rule',
      terms: (a) => ({ rules: [...a.rules.map((r) => ({ kind: r.kind, pattern: r.pattern })), parse(ruleSchema, rule, 'body')] }),
      show: ({ status, errors, preview }) => showAttachment(d, req, res, { status, rule, errors, preview }),
    });
  if (trying(req)) {
    const tried = await tryCandidate(d, req, res, (a) => ({
      rules: [...(a.candidate?.rules ?? a.rules.map((r) => ({ kind: r.kind, pattern: r.pattern }))), rule as RuleInput],
    }));
    if (tried.ok) return;
    return showAttachment(d, req, res, { status: tried.status, rule, errors: candidateRuleErrors(tried.errors) });
  }
  // The service parses the rule: a kind other than allow or deny comes back beside Kind.
  const result = await attempt(() => d.attachments.addRule(agentId, attachmentId, rule as RuleInput), 'pattern');
  if (!result.ok) return showAttachment(d, req, res, { status: result.status, rule, errors: result.errors });
  await redirectWith(req, res, `/agents/${agentId}/toolkits/${attachmentId}`, `Rule added: ${result.value.kind} ${result.value.pattern}.`);
};

/** POST /agents/:id/toolkits/:attachmentId/rules/:ruleId/delete: the confirmation with its preview, then, confirmed, the removal. */
export const removeGateRule: PageHandler = async (d, req, res) => {
  const { agentId, attachmentId } = attachmentIds(req);
  const ruleId = pathId(req.params, 'ruleId');
  if (!confirmed(req)) return renderPage(res, 200, await gateRuleConfirmation(d, req, { agentId, attachmentId }, ruleId));
  await d.attachments.deleteRule(agentId, attachmentId, ruleId);
  await redirectWith(req, res, `/agents/${agentId}/toolkits/${attachmentId}`, 'Rule removed.');
};

/** A refused cap's issues beside their fields: the service's check of the list (`caps`) names a tool. */
function capErrors(errors: FieldErrors): FieldErrors {
  return Object.fromEntries(Object.entries(errors).map(([field, messages]) => [field === 'caps' ? 'tool_id' : field, messages]));
}

/** A refused candidate rule's issues beside the rule form's fields: the list's positions are the form's one rule. */
function candidateRuleErrors(errors: FieldErrors): FieldErrors {
  return Object.fromEntries(Object.entries(errors).map(([field, messages]) => [field === 'rules' ? 'pattern' : field, messages]));
}
