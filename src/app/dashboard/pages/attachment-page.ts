// Configure Access Settings, one attachment's page: shown as the attachment stands, or again with a
// form as sent (beside its errors, or with its Preview's answer); and Detach, after its confirmation.
import type { Request, Response } from 'express';
import { pathId } from '../../../http/parse';
import type { DashboardServices, PageHandler } from '../dashboard-services';
import { pageContext, redirectWith } from '../form-data';
import { renderPage } from '../render';
import { AttachmentPage, type ApprovalFormValues, type CapFormValues, type TermsForm } from '../views/attachment';
import type { FieldErrors } from '../views/form';
import type { FormPreview } from '../views/policy-preview';
import type { RuleFormValues } from '../views/rules-table';
import { confirmed, detachConfirmation } from './removal-confirmation';

/** What Configure Access Settings shows: its status, and the one form sent, as sent. */
export interface AttachmentPageShown {
  status: number;
  /** The gate rule form as sent (empty otherwise), and the errors beside it. */
  rule?: RuleFormValues;
  errors?: FieldErrors;
  /** The approval form as sent; otherwise as the attachment's terms stand. */
  approval?: ApprovalFormValues;
  cap?: { values: CapFormValues; errors: FieldErrors };
  /** What a form's Preview showed, in that form. */
  preview?: { form: TermsForm; result: FormPreview };
  /** Allow on scheduled runs as its form sent it. */
  scheduled?: boolean;
}

/** The agent's and the attachment's ids in the path. */
export function attachmentIds(req: Request): { agentId: number; attachmentId: number } {
  return { agentId: pathId(req.params, 'id'), attachmentId: pathId(req.params, 'attachmentId') };
}

export async function showAttachment(d: DashboardServices, req: Request, res: Response, shown: AttachmentPageShown): Promise<void> {
  const { agentId, attachmentId } = attachmentIds(req);
  const [agent, attachment] = await Promise.all([d.agents.get(agentId), d.attachments.get(agentId, attachmentId)]);
  const approval = shown.approval ?? {
    required: attachment.approval !== null,
    approvers: (attachment.approval?.approvers ?? []).join('\n'),
    errors: {},
  };
  const cap = shown.cap ?? { values: { tool_id: '', per: 'sender', limit: '', window: '1d' }, errors: {} };
  const toolNames = new Map(d.registry.manifest.list().map((t) => [t.id, t.display_name]));
  renderPage(
    res,
    shown.status,
    AttachmentPage({
      ctx: pageContext(req),
      agent,
      attachment,
      rule: shown.rule ?? { kind: 'allow', pattern: '' },
      errors: shown.errors ?? {},
      approval,
      cap,
      toolNames,
      preview: shown.preview,
      scheduled: shown.scheduled,
    }),
  );
}

/** GET /agents/:id/toolkits/:attachmentId */
export const attachmentPage: PageHandler = (d, req, res) => showAttachment(d, req, res, { status: 200 });

/** POST /agents/:id/toolkits/:attachmentId/detach: the confirmation with its preview, then, confirmed, the detach. */
export const detachToolkit: PageHandler = async (d, req, res) => {
  const { agentId, attachmentId } = attachmentIds(req);
  if (!confirmed(req)) return renderPage(res, 200, await detachConfirmation(d, req, { agentId, attachmentId }));
  const attachment = await d.attachments.get(agentId, attachmentId);
  await d.attachments.detach(agentId, attachmentId);
  await redirectWith(
    req,
    res,
    `/agents/${agentId}`,
    `${attachment.toolkit.name} detached: its tools and rules no longer apply to this agent.`,
  );
};
