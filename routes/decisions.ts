// GET /decisions: the decision log as NDJSON from a cursor (SEMANTICS §16), for a log pipeline that
// holds the metrics token (or the admin's).
import { z } from 'zod';
import { decodeCursor, encodeCursor, MAX_CURSOR_LENGTH } from '../src/core/decision-cursor';
import { orUnavailable } from '../src/db/unavailable';
import { InvalidCursorError } from '../src/errors';
import { NDJSON, writeNdjson } from '../src/http/ndjson';
import { decisionLogLineSchema, readDecisionLog } from '../src/services/decision-log';
import { routeSection } from './route';
import type { RouteServices } from './route-services';

const MAX_DECISIONS = 100_000;

const decisionsQuery = z.strictObject({
  after: z
    .string()
    .max(MAX_CURSOR_LENGTH)
    .optional()
    .describe('the Toolgate-Cursor of the last read, or the cursor of the last line handled'),
  limit: z.coerce.number().int().min(1).max(MAX_DECISIONS).default(1000),
});

export const decisionsRoutes = routeSection<Pick<RouteServices, 'sequelize'>>('Decisions', (route) => [
  route({
    method: 'get',
    path: '/decisions',
    summary: 'The decision log, from a cursor',
    description:
      "One JSON line per tool-call record once it has its decision or its outcome, oldest first, at most `limit` lines after `after` (from the start without it). The record is the one GET /agents/:id/tool-calls gives, with its agent_id, the entry's event and logged_at, and the cursor after it. Read on from the Toolgate-Cursor header: no entry is given twice or passed over across reads, also while records are being written (an entry whose transaction is still open waits for the next read). With a retention, the oldest entries go; a cursor from before the oldest entry kept is a 410 cursor_expired that gives the cursor the log starts from now, never a silent gap. For the admin token or TOOLGATE_METRICS_TOKEN.",
    roles: ['metrics'],
    query: decisionsQuery,
    success: {
      status: 200,
      description: 'The entries as application/x-ndjson, one per line (none when there is nothing new)',
      schema: decisionLogLineSchema,
      contentType: 'application/x-ndjson',
      headers: { 'Toolgate-Cursor': 'where the next read starts: pass it as `after`' },
    },
    errors: ['invalid_cursor', 'cursor_expired'],
    handle: async (tg, { res, query }) => {
      const after = query.after === undefined ? null : decodeCursor(query.after);
      if (after === null && query.after !== undefined) throw new InvalidCursorError();
      const read = await orUnavailable(readDecisionLog(tg.sequelize, after, query.limit));
      res.status(200).set({ 'Content-Type': NDJSON, 'Toolgate-Cursor': encodeCursor(read.end), 'Cache-Control': 'no-store' });
      await writeNdjson(res, read.batches());
    },
  }),
]);
