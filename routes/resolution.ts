// GET /agents/:id/tools (admin): what a run would be offered, and why: the resolution explained.
import { z } from 'zod';
import { routingKeyOf } from '../src/core/routing-key';
import { resolutionSchema, type Run } from '../src/core/types';
import { senderText } from '../src/http/fields';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

export const resolutionQuery = z
  .strictObject({
    sender: senderText.optional(),
    scheduled: z.enum(['true', 'false']).optional(),
  })
  .refine((q) => !(q.sender !== undefined && q.scheduled === 'true'), {
    message: 'a run is a sender run or a scheduled run, not both: drop sender or scheduled',
  });

export const resolutionRoutes = routeSection<Pick<RouteServices, 'runs'>>('Resolution', (route) => [
  route({
    method: 'get',
    path: '/agents/:id/tools',
    summary: 'What a run would be offered, and why',
    description:
      '`?sender=` for a sender run (the address taken as given), `?scheduled=true` for a scheduled run, neither for the catalogue (every tool attached, gates ignored).',
    roles: ['admin'],
    query: resolutionQuery,
    success: { status: 200, description: 'The resolution, explained per attachment', schema: resolutionSchema },
    handle: async (tg, { ids, query }) => {
      // The explain view takes the address as given: it answers "what would this sender get".
      const run: Run =
        query.scheduled === 'true'
          ? { kind: 'scheduled' }
          : query.sender !== undefined
            ? { kind: 'sender', routing_key: routingKeyOf(query.sender) }
            : { kind: 'catalogue' };
      const resolution = await tg.runs.explain(ids.id, run);
      return {
        ...resolution,
        attachments: resolution.attachments.map((a) => ({
          attachment_id: a.attachment_id,
          toolkit_id: a.toolkit_id,
          toolkit_name: a.toolkit_name,
          admitted: a.admitted,
          reason: a.reason,
          matched_rule: a.matched_rule,
          tools: a.tools,
          stale_tool_ids: a.stale_tool_ids,
          approval: a.approval,
          needs_approval: a.needs_approval,
          caps: a.caps,
        })),
      };
    },
  }),
]);
