// Turns zod's issues into the HTTP.md validation error: 422 with `detail` a list of {loc, msg, type}.
import type { z } from 'zod';
import { ValidationError, type ValidationIssue } from '../errors';

export type Location = 'body' | 'query' | 'path';

export function parse<S extends z.ZodType>(schema: S, value: unknown, where: Location): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ValidationError(result.error.issues.map((issue) => toValidationIssue(issue, where)));
}

function toValidationIssue(issue: z.core.$ZodIssue, where: Location): ValidationIssue {
  return {
    loc: [where, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
    msg: issue.message,
    type: issue.code,
  };
}
