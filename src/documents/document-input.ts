// The shapes a document upload, search and ask take from a caller, as zod schemas the routes parse
// with and the store's types come from.
import { z } from 'zod';
import { name, text } from '../http/fields';
import { MAX_TOP_K } from './document-search';

/** When top_k is not given. */
export const DEFAULT_TOP_K = 5;

/** A document's text: under the 1 MB body limit anyway; NUL and other control characters refused. */
export const MAX_DOCUMENT_CHARS = 1_000_000;

export const documentInputSchema = z.strictObject({
  title: name(500),
  content: text(MAX_DOCUMENT_CHARS).refine((s) => s.trim() !== '', 'must not be empty'),
});
export type DocumentInput = z.infer<typeof documentInputSchema>;

/** A search query or a question: one to 1,000 characters, not only spaces. */
export const queryTextSchema = text(1000)
  .transform((s) => s.trim())
  .pipe(z.string().min(1, 'must not be empty'));

export const topKSchema = z
  .number()
  .int('top_k is a whole number')
  .min(1, 'top_k is at least 1')
  .max(MAX_TOP_K, `top_k is at most ${MAX_TOP_K}`)
  .default(DEFAULT_TOP_K);
