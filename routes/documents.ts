// Documents (client): upload, list and delete freely; search and ask only when the run is offered
// the gate tool document_search.
import { Router } from 'express';
import { z } from 'zod';
import { bodyOf, validateBody } from '../middleware/validate-body';
import { currentRun } from '../middleware/tool-run';
import { askDocuments } from '../src/documents/ask';
import { searchResult } from '../src/documents/document-search';
import { documentInputSchema, queryTextSchema, topKSchema } from '../src/documents/schemas';
import { parse, pathId } from '../src/http/parse';
import { authenticationResultsSchema, text } from '../src/http/schemas';
import { modelContext, orUpstreamError } from '../src/llm/language-model';
import { askResponse, documentResponse, searchResponse } from '../src/http/responses';
import { describeRoutes } from './route-description';
import type { RouteServices } from './route-services';

const runFields = {
  top_k: topKSchema,
  sender: text(1000).optional(),
  authentication_results: authenticationResultsSchema.optional(),
};
export const searchBody = z.strictObject({ query: queryTextSchema, ...runFields });
export const askBody = z.strictObject({ question: queryTextSchema, ...runFields });

export function documentsRouter(tg: Pick<RouteServices, 'agents' | 'documents' | 'idempotencyKey' | 'model' | 'requireRole' | 'requireTool' | 'toolRun'>): Router {
  const router = Router();
  const client = tg.requireRole('client');
  const gate = [tg.idempotencyKey, tg.toolRun(), tg.requireTool('document_search')];

  router.post('/agents/:id/documents', client, async (req, res) => {
    const agentId = pathId(req.params, 'id');
    const body = parse(documentInputSchema, req.body, 'body');
    res.status(201).json(await tg.documents.add(agentId, body));
  });

  router.get('/agents/:id/documents', client, async (req, res) => {
    const agent = await tg.agents.get(pathId(req.params, 'id'));
    res.json(await tg.documents.list(agent.id));
  });

  router.delete('/agents/:id/documents/:docId', client, async (req, res) => {
    const agentId = pathId(req.params, 'id');
    await tg.documents.delete(agentId, pathId(req.params, 'docId'));
    res.status(204).end();
  });

  router.post('/agents/:id/documents/search', client, validateBody(searchBody), ...gate, async (req, res) => {
    const run = currentRun(req);
    const { query, top_k } = bodyOf(req, searchBody);
    const hits = await run.dispatch('document_search', () => tg.documents.search(run.agentId, query, top_k));
    res.json({ routing_key: run.routingKey, results: hits.map(searchResult) });
  });

  router.post('/agents/:id/documents/ask', client, validateBody(askBody), ...gate, async (req, res) => {
    const run = currentRun(req);
    const { question, top_k } = bodyOf(req, askBody);
    const context = modelContext(run.agent, new Date());
    const result = await orUpstreamError(
      run.dispatch('document_search', () => askDocuments(tg.documents, (q, sources) => tg.model.answerQuestion(q, sources, context), run.agentId, question, top_k)),
    );
    res.json({ routing_key: run.routingKey, ...result });
  });
  return router;
}

export const documentsRoutes = describeRoutes('Documents', [
  {
    method: 'post',
    path: '/agents/:id/documents',
    summary: 'Upload a document',
    description: 'Cut into chunks on sentence boundaries and indexed for search.',
    roles: ['client'],
    body: documentInputSchema,
    success: { status: 201, description: 'The document', schema: documentResponse },
  },
  { method: 'get', path: '/agents/:id/documents', summary: "An agent's documents", roles: ['client'], success: { status: 200, description: 'Oldest first', schema: z.array(documentResponse) } },
  { method: 'delete', path: '/agents/:id/documents/:docId', summary: 'Delete a document', roles: ['client'], success: { status: 204, description: 'Deleted, with its chunks' } },
  {
    method: 'post',
    path: '/agents/:id/documents/search',
    summary: "Search an agent's documents",
    description: 'Gate: document_search.',
    roles: ['client'],
    body: searchBody,
    success: { status: 200, description: 'The best chunks first', schema: searchResponse },
    errors: ['sender_forbidden', 'tool_forbidden', 'approval_required', 'cap_exceeded'],
    idempotent: true,
  },
  {
    method: 'post',
    path: '/agents/:id/documents/ask',
    summary: "Answer a question from an agent's documents",
    description: 'Gate: document_search.',
    roles: ['client'],
    body: askBody,
    success: { status: 200, description: 'The answer and its sources', schema: askResponse },
    errors: ['sender_forbidden', 'tool_forbidden', 'approval_required', 'cap_exceeded', 'upstream_error'],
    idempotent: true,
  },
]);
