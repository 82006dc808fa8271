// Documents (client): upload, list and delete freely; search and ask only when the run is offered
// the gate tool document_search.
import { z } from 'zod';
import { currentRun } from '../middleware/current-run';
import { askAnswerSchema, askDocuments } from '../src/documents/ask';
import { searchAnswerViewSchema, searchResult } from '../src/documents/document-search';
import { documentViewSchema } from '../src/documents/document-store';
import { documentInputSchema, queryTextSchema, topKSchema } from '../src/documents/document-input';
import { authenticationResultsSchema, senderText } from '../src/http/fields';
import { modelContext, orUpstreamError } from '../src/llm/language-model';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

const runFields = {
  top_k: topKSchema,
  sender: senderText.optional(),
  authentication_results: authenticationResultsSchema.optional(),
};
export const searchBody = z.strictObject({ query: queryTextSchema, ...runFields });
export const askBody = z.strictObject({ question: queryTextSchema, ...runFields });

type DocumentServices = Pick<RouteServices, 'agents' | 'documents' | 'model' | 'requireTool' | 'toolRun'>;
// What search and ask share: a client's question, gated by document_search, safe to retry.
const gatedQuestion = {
  roles: ['client'],
  description: 'Gate: document_search.',
  idempotent: true,
  // Ported from the legacy API: a refusal says its sentence, which its clients match on.
  use: (tg: DocumentServices) => [tg.toolRun(), tg.requireTool('document_search', { legacySentence: true })],
} as const;

export const documentsRoutes = routeSection<DocumentServices>('Documents', (route) => [
  route({
    method: 'post',
    path: '/agents/:id/documents',
    summary: 'Upload a document',
    description: 'Cut into chunks on sentence boundaries and indexed for search.',
    roles: ['client'],
    body: documentInputSchema,
    success: { status: 201, description: 'The document', schema: documentViewSchema },
    handle: (tg, { ids, body }) => tg.documents.add(ids.id, body),
  }),
  route({
    method: 'get',
    path: '/agents/:id/documents',
    summary: "An agent's documents",
    roles: ['client'],
    success: { status: 200, description: 'Oldest first', schema: z.array(documentViewSchema) },
    handle: async (tg, { ids }) => tg.documents.list((await tg.agents.get(ids.id)).id),
  }),
  route({
    method: 'delete',
    path: '/agents/:id/documents/:docId',
    summary: 'Delete a document',
    roles: ['client'],
    success: { status: 204, description: 'Deleted, with its chunks' },
    handle: async (tg, { ids }) => {
      await tg.documents.delete(ids.id, ids.docId);
    },
  }),
  route({
    method: 'post',
    path: '/agents/:id/documents/search',
    summary: "Search an agent's documents",
    ...gatedQuestion,
    body: searchBody,
    success: { status: 200, description: 'The best chunks first', schema: searchAnswerViewSchema },
    errors: ['sender_forbidden', 'tool_forbidden', 'approval_required', 'cap_exceeded'],
    handle: async (tg, { req, body }) => {
      const run = currentRun(req);
      const found = await run.dispatch('document_search', () => tg.documents.search(run.agentId, body.query, body.top_k));
      return { routing_key: run.routingKey, results: found.hits.map(searchResult), retrieval: found.retrieval };
    },
  }),
  route({
    method: 'post',
    path: '/agents/:id/documents/ask',
    summary: "Answer a question from an agent's documents",
    ...gatedQuestion,
    body: askBody,
    success: { status: 200, description: 'The answer and its sources', schema: askAnswerSchema },
    errors: ['sender_forbidden', 'tool_forbidden', 'approval_required', 'cap_exceeded', 'upstream_error'],
    handle: async (tg, { req, body }) => {
      const run = currentRun(req);
      const context = modelContext(run.agent, new Date());
      const answer = (q: string, sources: Parameters<typeof tg.model.answerQuestion>[1]) => tg.model.answerQuestion(q, sources, context);
      const result = await orUpstreamError(
        run.dispatch('document_search', () => askDocuments(tg.documents, answer, run.agentId, body.question, body.top_k)),
      );
      return { routing_key: run.routingKey, ...result };
    },
  }),
]);
