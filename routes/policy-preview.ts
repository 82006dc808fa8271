// POST /policy/preview (admin): what a change of policy would do to the recorded traffic of a window
// (SEMANTICS §15). Nothing is written; the answer is the impact.
import { z } from 'zod';
import { previewInputSchema } from '../src/services/policy-preview';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

const verdictStatus = z.enum(['started', 'denied', 'skipped', 'pending_approval']);

const senderChange = z.object({
  routing_key: z.string().nullable(),
  agent_id: z.number().int(),
  tools: z.array(z.string()),
  runs: z.number().int().describe('the runs in the window of this sender with this agent'),
});
const scheduledChange = z.object({ agent_id: z.number().int(), tools: z.array(z.string()), runs: z.number().int() });

export const previewResponse = z.object({
  window: z.object({ from: z.string(), to: z.string() }),
  runs_examined: z.number().int(),
  calls_examined: z.number().int(),
  senders: z.object({ gaining: z.array(senderChange), losing: z.array(senderChange) }),
  scheduled: z.object({ gaining: z.array(scheduledChange), losing: z.array(scheduledChange) }),
  calls: z.object({
    changed: z.array(
      z.object({
        call_id: z.number().int(),
        agent_id: z.number().int(),
        tool_id: z.string(),
        routing_key: z.string().nullable(),
        at: z.string(),
        was: z.string().describe("the record's status"),
        would_be: verdictStatus.describe('what dispatch would record now: `started` when the call would run'),
        reason: z.enum(['offered', 'access_rules', 'not_offered', 'needs_approval', 'cap_exceeded']),
      }),
    ),
    counts: z.object({
      refused: z.number().int(),
      admitted: z.number().int(),
      pending_approval: z.number().int(),
      cap_exceeded: z.number().int(),
    }),
  }),
  not_replayed: z.object({ calls: z.number().int(), reason: z.string().nullable() }),
  truncated: z.boolean().describe('a list was cut at 100 entries; the counts count them all'),
});

export const policyPreviewRoutes = routeSection<Pick<RouteServices, 'previews'>>('Preview', (route) => [
  route({
    method: 'post',
    path: '/policy/preview',
    summary: 'What a change of policy would do',
    description:
      "One change (attach, update, detach, a toolkit's members, an agent's access rules) replayed against the recorded runs and tool calls of the window (default 7d): who gains and loses which tools, which calls would end otherwise. Nothing is written, nothing is notified, and no policy version changes.",
    roles: ['admin'],
    body: previewInputSchema,
    success: { status: 200, description: 'The impact', schema: previewResponse },
    errors: ['conflict'],
    handle: (tg, { req }) => tg.previews.preview(req.body),
  }),
]);
