// An attachment's candidate terms (SEMANTICS §15): the page of what they would change on recorded
// traffic, and its Promote (the candidate becomes the live terms) and Drop.
import type { AttachmentView } from '../../../services/attachments';
import type { PageHandler } from '../dashboard-services';
import { pageContext, redirectWith } from '../form-data';
import { renderPage } from '../render';
import { CandidatePage } from '../views/candidate';
import { attachmentIds } from './attachment-page';

/** GET /agents/:id/toolkits/:attachmentId/candidate */
export const candidatePage: PageHandler = async (d, req, res) => {
  const { agentId, attachmentId } = attachmentIds(req);
  const [agent, view] = await Promise.all([d.agents.get(agentId), d.attachments.candidate(agentId, attachmentId)]);
  renderPage(res, 200, CandidatePage({ ctx: pageContext(req), agent, view }));
};

/** POST /agents/:id/toolkits/:attachmentId/candidate/promote */
export const promoteCandidate: PageHandler = async (d, req, res) => {
  const { agentId, attachmentId } = attachmentIds(req);
  const attachment = await d.attachments.promote(agentId, attachmentId);
  await redirectWith(
    req,
    res,
    `/agents/${agentId}/toolkits/${attachmentId}`,
    `Promoted: the candidate is ${attachment.toolkit.name}'s live terms now. ${gateWords(attachment)}`,
  );
};

/** POST /agents/:id/toolkits/:attachmentId/candidate/drop */
export const dropCandidate: PageHandler = async (d, req, res) => {
  const { agentId, attachmentId } = attachmentIds(req);
  await d.attachments.dropCandidate(agentId, attachmentId);
  await redirectWith(req, res, `/agents/${agentId}/toolkits/${attachmentId}`, 'Candidate dropped: the live terms are as they were.');
};

function gateWords(attachment: AttachmentView): string {
  const rules = attachment.rules.map((r) => `${r.kind} ${r.pattern}`);
  return rules.length === 0 ? 'Its gate is open.' : `Its gate rules: ${rules.join(', ')}.`;
}
