// Agents: the list, New agent, and the router of every agent page, one named handler per page or
// form: an agent's page (agent-page.ts), each attachment's Configure Access Settings
// (attachment-page.ts, its forms in attachment-forms.ts) and its candidate terms (candidate.ts).
// Each form that changes a policy has a Preview beside its Save (SEMANTICS §15): the same form,
// previewed, not saved; a gate rule's, an access rule's or a cap's Remove, and Detach, show their
// preview on a confirmation page first.
import { Router, type Request, type Response } from 'express';
import type { DashboardServices, PageHandler } from '../dashboard-services';
import { attempt, listField, pageContext, queryText, redirectWith, textField } from '../form-data';
import { renderPage } from '../render';
import { accessRulesByAgent, toolkitNamesByAgent } from '../usage';
import { AgentFormPage, type AgentFormValues } from '../views/agent-form';
import { AgentsPage } from '../views/agents';
import type { FieldErrors } from '../views/form';
import { addAccessRule, agentPage, attachToolkit, removeAccessRule, saveEscalation } from './agent-page';
import { addCap, addGateRule, removeCap, removeGateRule, saveApproval, saveScheduled } from './attachment-forms';
import { attachmentPage, detachToolkit } from './attachment-page';
import { candidatePage, dropCandidate, promoteCandidate } from './candidate';

/** How many agents a page of the list shows. */
export const AGENTS_PER_PAGE = 50;

export function agentPages(d: DashboardServices): Router {
  const router = Router();
  const on =
    (handler: PageHandler) =>
    (req: Request, res: Response): Promise<void> =>
      handler(d, req, res);
  // Express tries them in this order: /agents/new before /agents/:id, and each form's path apart.
  router.get('/agents', on(agentList));
  router.get('/agents/new', on(newAgentForm));
  router.post('/agents', on(createAgent));
  router.get('/agents/:id', on(agentPage));
  router.post('/agents/:id/access-rules', on(addAccessRule));
  router.post('/agents/:id/escalation', on(saveEscalation));
  router.post('/agents/:id/access-rules/:ruleId/delete', on(removeAccessRule));
  router.post('/agents/:id/toolkits', on(attachToolkit));
  router.get('/agents/:id/toolkits/:attachmentId', on(attachmentPage));
  router.get('/agents/:id/toolkits/:attachmentId/candidate', on(candidatePage));
  router.post('/agents/:id/toolkits/:attachmentId/candidate/promote', on(promoteCandidate));
  router.post('/agents/:id/toolkits/:attachmentId/candidate/drop', on(dropCandidate));
  router.post('/agents/:id/toolkits/:attachmentId', on(saveScheduled));
  router.post('/agents/:id/toolkits/:attachmentId/approval', on(saveApproval));
  router.post('/agents/:id/toolkits/:attachmentId/caps', on(addCap));
  router.post('/agents/:id/toolkits/:attachmentId/caps/:index/delete', on(removeCap));
  router.post('/agents/:id/toolkits/:attachmentId/rules', on(addGateRule));
  router.post('/agents/:id/toolkits/:attachmentId/rules/:ruleId/delete', on(removeGateRule));
  router.post('/agents/:id/toolkits/:attachmentId/detach', on(detachToolkit));
  return router;
}

/**
 * GET /agents: a page of agents by name, with a search by the beginning of a name. It reads the
 * page's rows and their attachments and rules, never every agent.
 */
const agentList: PageHandler = async (d, req, res) => {
  const name = queryText(req, 'name').trim().slice(0, 200);
  const after = queryText(req, 'after');
  const page = await d.agents.page({ limit: AGENTS_PER_PAGE, ...(name ? { name } : {}), ...(after ? { after } : {}) });
  const ids = page.agents.map((a) => a.id);
  const [toolkitsByAgent, rulesByAgent] = await Promise.all([toolkitNamesByAgent(d.sequelize, ids), accessRulesByAgent(d.sequelize, ids)]);
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
};

/** New agent's form, blank with Default Tools ticked, or again as sent beside its errors. */
async function showNewAgent(
  d: DashboardServices,
  req: Request,
  res: Response,
  shown: { status: number; values: AgentFormValues; errors: FieldErrors },
): Promise<void> {
  const toolNames = new Map(d.registry.manifest.list().map((t) => [t.id, t.display_name]));
  renderPage(
    res,
    shown.status,
    AgentFormPage({ ctx: pageContext(req), toolkits: await d.toolkits.list(), toolNames, values: shown.values, errors: shown.errors }),
  );
}

/** GET /agents/new */
const newAgentForm: PageHandler = async (d, req, res) => {
  const defaults = (await d.toolkits.list()).filter((t) => t.system_key === 'default_tools').map((t) => String(t.id));
  await showNewAgent(d, req, res, { status: 200, values: { name: '', description: '', toolkitIds: defaults }, errors: {} });
};

/** POST /agents */
const createAgent: PageHandler = async (d, req, res) => {
  const values = { name: textField(req, 'name'), description: textField(req, 'description'), toolkitIds: listField(req, 'toolkit') };
  const result = await attempt(() =>
    d.agents.create({ name: values.name, description: values.description || null, toolkit_ids: values.toolkitIds }),
  );
  if (!result.ok) return showNewAgent(d, req, res, { status: result.status, values, errors: result.errors });
  await redirectWith(req, res, `/agents/${result.value.id}`, `Agent ${result.value.name} created.`);
};
