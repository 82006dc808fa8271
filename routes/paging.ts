// What a paged list adds to its answer: the body stays the array it always was, and the way on is
// in headers (docs/HTTP.md, "Pages"): `Toolgate-Next-Cursor`, the cursor to pass as `after`, and a
// `Link` to the next page with the same query; neither on the last page.
import type { Request, Response } from 'express';
import { z } from 'zod';
import { MAX_CURSOR_LENGTH } from '../src/core/page-cursor';

export const NEXT_CURSOR_HEADER = 'Toolgate-Next-Cursor';

/** A page's query: at most `limit` rows (1 to 1,000, default 100), after the cursor `after`. */
export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  after: z.string().min(1).max(MAX_CURSOR_LENGTH).optional(),
};

export function linkNextPage(req: Request, res: Response, next: string | null, query: Record<string, string | number | undefined>): void {
  if (next === null) return;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...query, after: next })) if (value !== undefined) params.set(name, String(value));
  res.set(NEXT_CURSOR_HEADER, next);
  res.set('Link', `<${req.baseUrl}${req.path}?${params.toString()}>; rel="next"`);
}
