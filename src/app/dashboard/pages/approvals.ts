// Approvals: the list of an agent's approval requests (a GET form), and Approve and Deny. Approving
// runs the stored input once, before the page answers; a request decided meanwhile (here, by a
// message or another operator) is said so, and nothing runs.
import { Router } from 'express';
import { APPROVAL_STATUSES, type ApprovalStatus } from '../../../core/approval-request';
import { CapExceededError, ConflictError } from '../../../errors';
import { pathId } from '../../../http/parse';
import type { DashboardServices } from '../dashboard-services';
import { pageContext, queryText, redirectWith } from '../form-data';
import { pickAgent } from './agent-picker';
import { renderPage } from '../render';
import { ApprovalsPage } from '../views/approvals';

const REQUESTS_SHOWN = 100;

export function approvalPages(d: DashboardServices): Router {
  const router = Router();

  router.get('/approvals', async (req, res) => {
    const { agents, agentId } = await pickAgent(d, req);
    const wanted = queryText(req, 'status') || (req.query.status === undefined ? 'pending' : '');
    const status = (APPROVAL_STATUSES as readonly string[]).includes(wanted) ? (wanted as ApprovalStatus) : undefined;
    const after = queryText(req, 'after');
    const page =
      agentId === null
        ? { requests: [], next: null }
        : await d.approvals.page(agentId, { status, limit: REQUESTS_SHOWN, ...(after ? { after } : {}) });
    renderPage(
      res,
      200,
      ApprovalsPage({
        ctx: pageContext(req),
        agents,
        agentId,
        status: status ?? '',
        requests: page.requests,
        limit: REQUESTS_SHOWN,
        next: page.next,
        older: after !== '',
      }),
    );
  });

  for (const decision of ['approve', 'deny'] as const) {
    router.post(`/approvals/:id/:requestId/${decision}`, async (req, res) => {
      const agentId = pathId(req.params, 'id');
      const requestId = pathId(req.params, 'requestId');
      const back = `/approvals?agent=${agentId}`;
      try {
        const decided = await d.approvals.decide(agentId, requestId, decision, { via: 'dashboard' });
        const outcome = decided.result
          ? decided.result.status === 'success'
            ? `: ${decided.tool} ran once`
            : `: ${decided.tool} ran and failed (${decided.result.error})`
          : '';
        await redirectWith(req, res, back, `Request ${requestId} ${decided.status}${outcome}.`);
      } catch (err) {
        // Decided, expired or void meanwhile, or over a cap (it stays pending): the operator reads why, and nothing ran.
        if (err instanceof ConflictError || err instanceof CapExceededError) return redirectWith(req, res, back, err.message);
        throw err;
      }
    });
  }
  return router;
}
