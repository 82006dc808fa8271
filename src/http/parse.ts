// Turns zod's issues into the HTTP.md validation error: 422 with `detail` a list of {loc, msg, type}.
import type { z } from 'zod';
import { InputTooComplexError, NotFoundError, ValidationError, type ValidationIssue } from '../errors';
import { CANONICAL_ID, idText, MAX_ROW_ID } from './fields';

export type Location = 'body' | 'query' | 'path';

/** Where a value was read: a part of the request, or a field within one (`['body', 'input']`). */
export type Where = Location | [Location, ...(string | number)[]];

export function parse<S extends z.ZodType>(schema: S, value: unknown, where: Where): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // A value past a parsing bound (SEMANTICS §12b) is its own error, naming the bound.
  const bound = result.error.issues.find(boundOf);
  if (bound !== undefined) {
    const { loc, msg } = toValidationIssue(bound, where);
    throw new InputTooComplexError({ bound: boundOf(bound)!, detail: msg, loc });
  }
  throw new ValidationError(result.error.issues.map((issue) => toValidationIssue(issue, where)));
}

/** The bound a custom issue says its value is past (tooComplex's issues), or undefined. */
function boundOf(issue: z.core.$ZodIssue): string | undefined {
  const bound = issue.code === 'custom' ? (issue.params as { bound?: unknown } | undefined)?.bound : undefined;
  return typeof bound === 'string' ? bound : undefined;
}

function toValidationIssue(issue: z.core.$ZodIssue, where: Where): ValidationIssue {
  return {
    loc: [...(typeof where === 'string' ? [where] : where), ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
    msg: issue.message,
    type: issue.code,
  };
}

/**
 * The id in a route parameter: a 422 unless it is canonical decimal, and a 404 when it is larger
 * than any row's id (a well-formed id that names nothing).
 */
export function pathId(params: Record<string, unknown>, name: string): number {
  const text = params[name];
  // Every gated request reads its agent's id here: a canonical id in range is answered without
  // zod, which is kept for the refusals and their messages.
  if (typeof text === 'string' && CANONICAL_ID.test(text)) {
    const id = Number(text);
    if (id <= MAX_ROW_ID) return id;
  }
  const result = idText.safeParse(text);
  if (!result.success)
    throw new ValidationError(result.error.issues.map((issue) => ({ ...toValidationIssue(issue, 'path'), loc: ['path', name] })));
  if (result.data > MAX_ROW_ID) throw new NotFoundError(`Id ${result.data}`);
  return result.data;
}
