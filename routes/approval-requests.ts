// Approval requests (admin; SEMANTICS §12): the calls that wait for an approver, and their
// decisions. Approving runs the stored input once, through the requester's run, before it answers;
// a request that is no longer pending is a 409 and nothing runs.
import { Router } from 'express';
import { z } from 'zod';
import { APPROVAL_STATUSES } from '../src/core/approval-request';
import { parse, pathId } from '../src/http/parse';
import { approvalRequestResponse } from '../src/http/responses';
import { describeRoutes } from './route-description';
import type { RouteServices } from './route-services';

export const approvalListQuery = z.strictObject({
  status: z.enum(APPROVAL_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export function approvalRequestsRouter(tg: Pick<RouteServices, 'agents' | 'approvals' | 'requireRole'>): Router {
  const router = Router();
  const admin = tg.requireRole('admin');
  const ids = (params: Record<string, unknown>) => ({ agentId: pathId(params, 'id'), requestId: pathId(params, 'requestId') });

  router.get('/agents/:id/approval-requests', admin, async (req, res) => {
    const agentId = pathId(req.params, 'id');
    const query = parse(approvalListQuery, req.query, 'query');
    await tg.agents.get(agentId);
    res.json(await tg.approvals.list(agentId, query));
  });

  router.get('/agents/:id/approval-requests/:requestId', admin, async (req, res) => {
    const { agentId, requestId } = ids(req.params);
    res.json(await tg.approvals.get(agentId, requestId));
  });

  for (const decision of ['approve', 'deny'] as const) {
    router.post(`/agents/:id/approval-requests/:requestId/${decision}`, admin, async (req, res) => {
      const { agentId, requestId } = ids(req.params);
      res.json(await tg.approvals.decide(agentId, requestId, decision, { via: 'admin' }));
    });
  }
  return router;
}

export const approvalRequestsRoutes = describeRoutes('Approval requests', [
  {
    method: 'get',
    path: '/agents/:id/approval-requests',
    summary: "An agent's approval requests",
    description: 'Newest first; `status` keeps only those (pending, approved, denied, expired, void). A pending request past its time is marked expired as it is read.',
    roles: ['admin'],
    query: approvalListQuery,
    success: { status: 200, description: 'The requests', schema: z.array(approvalRequestResponse) },
  },
  {
    method: 'get',
    path: '/agents/:id/approval-requests/:requestId',
    summary: 'Read an approval request',
    roles: ['admin'],
    success: { status: 200, description: 'The request', schema: approvalRequestResponse },
  },
  {
    method: 'post',
    path: '/agents/:id/approval-requests/:requestId/approve',
    summary: 'Approve a request: its stored input runs, once',
    description:
      "Runs the exact input the call was validated with, through the requester's run resolved anew, and answers after it ran, with its `result`. A request no longer pending (decided, expired or void) is a 409 and nothing runs; one whose attachment no longer grants the tool to the requester becomes void (409).",
    roles: ['admin'],
    success: { status: 200, description: 'The request as decided, with its result', schema: approvalRequestResponse },
    errors: ['conflict'],
  },
  {
    method: 'post',
    path: '/agents/:id/approval-requests/:requestId/deny',
    summary: 'Deny a request: it never runs',
    roles: ['admin'],
    success: { status: 200, description: 'The request as decided', schema: approvalRequestResponse },
    errors: ['conflict'],
  },
]);
