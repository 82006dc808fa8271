// Attachments and gate rules (admin): grant a toolkit to an agent, change its terms, revoke.
import { z } from 'zod';
import { attachmentViewSchema, candidateShadowSchema, ruleViewSchema } from '../src/services/attachments';
import { attachInputSchema, attachmentPatchSchema, ruleSchema } from '../src/services/attachment-inputs';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

export const attachmentsRoutes = routeSection<Pick<RouteServices, 'attachments'>>('Attachments and gate rules', (route) => [
  route({
    method: 'get',
    path: '/agents/:id/toolkits',
    summary: "An agent's attachments",
    roles: ['admin'],
    success: { status: 200, description: 'Each attachment with its toolkit, terms and rules', schema: z.array(attachmentViewSchema) },
    handle: (tg, { ids }) => tg.attachments.list(ids.id),
  }),
  route({
    method: 'post',
    path: '/agents/:id/toolkits',
    summary: 'Attach a toolkit to an agent',
    description: 'Patterns are normalized (SEMANTICS §4); a bad one is a 422 saying why.',
    roles: ['admin'],
    body: attachInputSchema,
    success: { status: 201, description: 'The attachment', schema: attachmentViewSchema },
    errors: ['conflict'],
    handle: (tg, { ids, body }) => tg.attachments.attach(ids.id, body),
  }),
  route({
    method: 'get',
    path: '/agents/:id/toolkits/:attachmentId',
    summary: 'Read an attachment',
    roles: ['admin'],
    success: { status: 200, description: 'The attachment', schema: attachmentViewSchema },
    handle: (tg, { ids }) => tg.attachments.get(ids.id, ids.attachmentId),
  }),
  route({
    method: 'patch',
    path: '/agents/:id/toolkits/:attachmentId',
    summary: "Change an attachment's terms",
    description: '`rules`, when given, replaces the whole list.',
    roles: ['admin'],
    body: attachmentPatchSchema,
    success: { status: 200, description: 'The attachment, changed', schema: attachmentViewSchema },
    handle: (tg, { ids, body }) => tg.attachments.update(ids.id, ids.attachmentId, body),
  }),
  route({
    method: 'delete',
    path: '/agents/:id/toolkits/:attachmentId',
    summary: 'Detach (revoke the grant)',
    roles: ['admin'],
    success: { status: 204, description: 'Detached' },
    handle: async (tg, { ids }) => {
      await tg.attachments.detach(ids.id, ids.attachmentId);
    },
  }),
  route({
    method: 'put',
    path: '/agents/:id/toolkits/:attachmentId/candidate',
    summary: 'Set candidate terms (shadow)',
    description:
      "Terms tried beside the live ones (SEMANTICS §15), in place of any candidate it carried: the fields given replace the live ones in the candidate's resolution. Runs are offered and checked by the live terms only; each also resolves the candidate, and where it decides otherwise the run and call records carry `shadow`.",
    roles: ['admin'],
    body: attachmentPatchSchema,
    bodyRequired: false,
    success: { status: 200, description: 'The attachment, with `candidate`', schema: attachmentViewSchema },
    handle: (tg, { ids, body }) => tg.attachments.setCandidate(ids.id, ids.attachmentId, body),
  }),
  route({
    method: 'get',
    path: '/agents/:id/toolkits/:attachmentId/candidate',
    summary: 'Read the candidate and its shadow so far',
    roles: ['admin'],
    success: { status: 200, description: 'The attachment with `candidate` and `shadow`', schema: candidateShadowSchema },
    errors: ['no_candidate'],
    handle: (tg, { ids }) => tg.attachments.candidate(ids.id, ids.attachmentId),
  }),
  route({
    method: 'post',
    path: '/agents/:id/toolkits/:attachmentId/candidate/promote',
    summary: 'Promote the candidate to the live terms',
    description:
      "One transaction: the candidate's fields replace the live ones, as PATCH would, and the candidate is cleared. The agent's policy version is raised, so every instance decides by them from its next run.",
    roles: ['admin'],
    success: { status: 200, description: 'The attachment, on its new live terms', schema: attachmentViewSchema },
    errors: ['no_candidate'],
    handle: (tg, { ids }) => tg.attachments.promote(ids.id, ids.attachmentId),
  }),
  route({
    method: 'delete',
    path: '/agents/:id/toolkits/:attachmentId/candidate',
    summary: 'Drop the candidate',
    roles: ['admin'],
    success: { status: 204, description: 'Dropped; the live terms stay as they are' },
    errors: ['no_candidate'],
    handle: async (tg, { ids }) => {
      await tg.attachments.dropCandidate(ids.id, ids.attachmentId);
    },
  }),
  route({
    method: 'post',
    path: '/agents/:id/toolkits/:attachmentId/rules',
    summary: 'Add a gate rule',
    roles: ['admin'],
    body: ruleSchema,
    success: { status: 201, description: 'The rule, its pattern normalized', schema: ruleViewSchema },
    errors: ['conflict'],
    handle: (tg, { ids, body }) => tg.attachments.addRule(ids.id, ids.attachmentId, body),
  }),
  route({
    method: 'delete',
    path: '/agents/:id/toolkits/:attachmentId/rules/:ruleId',
    summary: 'Remove a gate rule',
    roles: ['admin'],
    success: { status: 204, description: 'Removed' },
    handle: async (tg, { ids }) => {
      await tg.attachments.deleteRule(ids.id, ids.attachmentId, ids.ruleId);
    },
  }),
]);
