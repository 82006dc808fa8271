// Approval requests (admin; SEMANTICS §12): the calls that wait for an approver, and their
// decisions. Approving runs the stored input once, through the requester's run, before it answers;
// a request that is no longer pending is a 409 and nothing runs.
import { z } from 'zod';
import { APPROVAL_STATUSES } from '../src/core/approval-request';
import { approvalRequestViewSchema } from '../src/core/approval-request';
import { linkNextPage, pageQuery } from './paging';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

export const approvalListQuery = z.strictObject({
  status: z.enum(APPROVAL_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  after: pageQuery.after,
});

export const approvalRequestsRoutes = routeSection<Pick<RouteServices, 'agents' | 'approvals'>>('Approval requests', (route) => [
  route({
    method: 'get',
    path: '/agents/:id/approval-requests',
    summary: "An agent's approval requests",
    description:
      'Newest first, at most `limit` (default 100); `status` keeps only those (pending, approved, denied, expired, void). A pending request past its time is marked expired as it is read. When older requests follow, the `Toolgate-Next-Cursor` header holds the cursor to pass as `after`, and `Link` (rel="next") the next page; a cursor these requests did not give is a 422 `validation_error` of type `invalid_cursor`.',
    roles: ['admin'],
    query: approvalListQuery,
    success: { status: 200, description: 'The requests', schema: z.array(approvalRequestViewSchema) },
    handle: async (tg, { ids, query, req, res }) => {
      await tg.agents.get(ids.id);
      const page = await tg.approvals.page(ids.id, query);
      linkNextPage(req, res, page.next, { limit: query.limit, status: query.status });
      return page.requests;
    },
  }),
  route({
    method: 'get',
    path: '/agents/:id/approval-requests/:requestId',
    summary: 'Read an approval request',
    roles: ['admin'],
    success: { status: 200, description: 'The request', schema: approvalRequestViewSchema },
    handle: (tg, { ids }) => tg.approvals.get(ids.id, ids.requestId),
  }),
  route({
    method: 'post',
    path: '/agents/:id/approval-requests/:requestId/approve',
    summary: 'Approve a request: its stored input runs, once',
    description:
      "Runs the exact input the call was validated with, through the requester's run resolved anew, and answers after it ran, with its `result`. A request no longer pending (decided, expired or void) is a 409 and nothing runs; one whose attachment no longer grants the tool to the requester becomes void (409).",
    roles: ['admin'],
    success: { status: 200, description: 'The request as decided, with its result', schema: approvalRequestViewSchema },
    errors: ['conflict'],
    handle: (tg, { ids }) => tg.approvals.decide(ids.id, ids.requestId, 'approve', { via: 'admin' }),
  }),
  route({
    method: 'post',
    path: '/agents/:id/approval-requests/:requestId/deny',
    summary: 'Deny a request: it never runs',
    roles: ['admin'],
    success: { status: 200, description: 'The request as decided', schema: approvalRequestViewSchema },
    errors: ['conflict'],
    handle: (tg, { ids }) => tg.approvals.decide(ids.id, ids.requestId, 'deny', { via: 'admin' }),
  }),
]);
