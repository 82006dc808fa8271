// What each terms form of Configure Access Settings can do besides Save: Preview (the terms Save
// would write, checked as Save checks them, previewed as a change of this attachment) and "Try as
// candidate" (the terms tried on live traffic before they are live, SEMANTICS §15).
import type { Request, Response } from 'express';
import { parse } from '../../../http/parse';
import type { AttachmentView } from '../../../services/attachments';
import { attachmentPatchSchema, type AttachmentPatch } from '../../../services/attachment-inputs';
import type { DashboardServices } from '../dashboard-services';
import { attempt, redirectWith, textField } from '../form-data';
import { previewForm } from '../form-preview';
import type { TermsForm } from '../views/attachment';
import type { FieldErrors } from '../views/form';
import type { FormPreview } from '../views/policy-preview';
import { attachmentIds } from './attachment-page';

/** The terms a form would write, given the attachment as it stands. */
export type Terms = (attachment: AttachmentView) => AttachmentPatch;

/** The page again with the form as sent: beside its errors, or with the preview's answer in it. */
export type ShowTermsForm = (shown: {
  status: number;
  errors: FieldErrors;
  preview?: { form: TermsForm; result: FormPreview };
}) => Promise<void>;

export interface TermsPreview {
  form: TermsForm;
  terms: Terms;
  show: ShowTermsForm;
}

/** Where a form's preview puts what the preview itself refused (what Save's checks refuse names its own field). */
const PREVIEW_REFUSAL_FIELD: Record<TermsForm, string> = { rule: 'pattern', approval: 'approval', cap: 'tool_id', scheduled: 'form' };

export async function previewTerms(d: DashboardServices, req: Request, { form, terms, show }: TermsPreview): Promise<void> {
  const { agentId, attachmentId } = attachmentIds(req);
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
  if (!previewed.ok) return show({ status: previewed.status, errors: previewed.errors });
  return show({ status: 200, errors: {}, preview: { form, result: previewed.preview } });
}

/** Whether the form was sent by its "Try as candidate" rather than its Save. */
export function trying(req: Request): boolean {
  return textField(req, 'try') === 'candidate';
}

/**
 * The form's terms become the attachment's candidate, with what the candidate already held; set,
 * the answer is the candidate's page, else the refusal for the form to show.
 */
export async function tryCandidate(
  d: DashboardServices,
  req: Request,
  res: Response,
  terms: Terms,
): Promise<{ ok: true } | { ok: false; status: number; errors: FieldErrors }> {
  const { agentId, attachmentId } = attachmentIds(req);
  const attachment = await d.attachments.get(agentId, attachmentId);
  const result = await attempt(() =>
    d.attachments.setCandidate(agentId, attachmentId, { ...candidateInput(attachment), ...terms(attachment) }),
  );
  if (!result.ok) return { ok: false, status: result.status, errors: result.errors };
  await redirectWith(
    req,
    res,
    `/agents/${agentId}/toolkits/${attachmentId}/candidate`,
    'Candidate terms set: the live terms still decide every run, and the records say where these would decide otherwise.',
  );
  return { ok: true };
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
