// POST /policy/preview (admin): what a change of policy would do to the recorded traffic of a window
// (SEMANTICS §15). Nothing is written; the answer is the impact.
import { previewInputSchema } from '../src/services/policy-preview';
import { previewImpactSchema } from '../src/core/policy-preview';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

export const policyPreviewRoutes = routeSection<Pick<RouteServices, 'previews'>>('Preview', (route) => [
  route({
    method: 'post',
    path: '/policy/preview',
    summary: 'What a change of policy would do',
    description:
      "One change (attach, update, detach, a toolkit's members, an agent's access rules) replayed against the recorded runs and tool calls of the window (default 7d): who gains and loses which tools, which calls would end otherwise. Nothing is written, nothing is notified, and no policy version changes.",
    roles: ['admin'],
    body: previewInputSchema,
    success: { status: 200, description: 'The impact', schema: previewImpactSchema },
    errors: ['conflict'],
    handle: (tg, { body }) => tg.previews.preview(body),
  }),
]);
