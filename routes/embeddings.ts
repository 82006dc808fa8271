// Semantic search's state (admin): how many chunks hold a vector of the configured model, which
// engine compares them, and the re-embedding job, which an operator starts after changing the
// model or the dimensions (any instance may run it; several share the work).
import { z } from 'zod';
import { NotFoundError } from '../src/errors';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

const embeddingsResponse = z.object({
  model: z.string(),
  dimensions: z.number().int().nullable().describe('null until the provider first answers, when not configured'),
  total: z.number().int().describe('chunks of every agent'),
  embedded: z.number().int().describe('chunks holding a vector of this model and dimensions'),
  pending: z.number().int().describe('chunks the job still has to embed'),
  engine: z.enum(['exact', 'pgvector']).describe('how cosines are computed: toolgate_dot over real[], or pgvector'),
  index: z.string().nullable().describe("pgvector's HNSW index serving this model, if any"),
  engine_note: z.string().optional(),
  job: z.object({
    running: z.boolean().describe('a run is going on this instance'),
    last: z.object({ finished_at: z.string(), embedded: z.number().int(), error: z.string().nullable() }).nullable(),
  }),
});

type EmbeddingServices = Pick<RouteServices, 'embeddings'>;

async function stateOf(tg: EmbeddingServices) {
  const semantic = tg.embeddings;
  if (!semantic)
    throw new NotFoundError(
      'Semantic search',
      'no embeddings provider is configured, so search goes by words only; configure one (the service: TOOLGATE_MODEL_PROVIDER=openai; a host: createToolgate({ embeddings }))',
    );
  const index = semantic.index.current();
  return {
    ...(await semantic.job.progress()),
    engine: index.engine,
    index: index.index,
    ...(index.reason ? { engine_note: index.reason } : {}),
    job: semantic.job.view(),
  };
}

export const embeddingsRoutes = routeSection<EmbeddingServices>('Embeddings', (route) => [
  route({
    method: 'get',
    path: '/embeddings',
    summary: "Semantic search's state",
    description:
      'How many chunks hold a vector of the configured model, and the re-embedding job on this instance. 404 without embeddings.',
    roles: ['admin'],
    success: { status: 200, description: 'The state', schema: embeddingsResponse },
    handle: (tg) => stateOf(tg),
  }),
  route({
    method: 'post',
    path: '/embeddings/reindex',
    summary: 'Start the re-embedding job',
    description:
      'Embeds, in the background, every chunk with no vector of the configured model and dimensions. Already running: the same run. Safe from several instances.',
    roles: ['admin'],
    bodyRequired: false,
    body: z.strictObject({}),
    success: { status: 202, description: 'Started (or already running)', schema: embeddingsResponse },
    handle: async (tg) => {
      tg.embeddings?.job.start();
      return stateOf(tg);
    },
  }),
]);
