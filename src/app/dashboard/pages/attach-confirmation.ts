// Whether an attach with no rules must be confirmed first, and the confirmation page when it must:
// the toolkit holds gate tools, and the form has not (yet) agreed to give each of them to every
// sender. A toolkit id that is no id, or names no toolkit, is left to the attach to refuse.
import type { Request } from 'express';
import type { VNode } from 'preact';
import { CANONICAL_ID, MAX_ROW_ID } from '../../../http/fields';
import type { DashboardServices } from '../dashboard-services';
import { pageContext, textField } from '../form-data';
import { openGateGrant, unconfirmed } from '../open-gate';
import { AttachConfirmationPage } from '../views/attach-confirmation';

export async function openGateConfirmation(d: DashboardServices, req: Request, agentId: number): Promise<VNode | null> {
  const toolkitId = textField(req, 'toolkit_id');
  if (!CANONICAL_ID.test(toolkitId) || Number(toolkitId) > MAX_ROW_ID) return null;
  const [agent, toolkit, accessRules] = await Promise.all([
    d.agents.get(agentId),
    d.toolkits.get(Number(toolkitId)),
    d.accessRules.list(agentId),
  ]);
  const grant = openGateGrant(toolkit, d.registry.manifest);
  const confirmed = textField(req, 'confirmed');
  const missing = unconfirmed(grant, confirmed);
  if (missing.length === 0) return null;
  return AttachConfirmationPage({
    ctx: pageContext(req),
    agent,
    toolkit,
    grant,
    added: confirmed === '' ? [] : missing,
    accessRules,
  });
}
