// Turns zod's issues into the HTTP.md validation error: 422 with `detail` a list of {loc, msg, type},
// located in the request by a route's parse, or in the value by a service's check of what it was given.
import type { z } from 'zod';
import { InputTooComplexError, NotFoundError, ValidationError, type ValidationIssue } from '../errors';
import { CANONICAL_ID, idText, MAX_ROW_ID } from './fields';

export type Location = 'body' | 'query' | 'path';

/** Where a value was read: a part of the request, or a field within one (`['body', 'input']`). */
export type Where = Location | [Location, ...(string | number)[]];

/** A value parse() gave, typed as such: a service takes it as it stands, with no second parse. */
declare const parsedBy: unique symbol;
export type Parsed<S extends z.ZodType> = z.output<S> & { readonly [parsedBy]: S };

/** The values parse() gave, each with the schema that gave it (objects only: the bodies handed on). */
const parsedValues = new WeakMap<object, z.ZodType>();

export function parse<S extends z.ZodType>(schema: S, value: unknown, where: Where): Parsed<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw refusal(result.error.issues, where);
  if (typeof result.data === 'object' && result.data !== null) parsedValues.set(result.data, schema);
  return result.data as Parsed<S>;
}

/**
 * What a service makes of what it is given: a value parse() gave with this schema (a route's body,
 * handed on), as it stands; anything else (a host's own code) parsed here. A refusal says where in
 * the value, not where in a request: the route that handed the value on adds that.
 */
export function checked<S extends z.ZodType>(schema: S, given: z.input<S> | Parsed<S>): z.output<S> {
  if (typeof given === 'object' && given !== null && parsedValues.get(given) === schema) return given as z.output<S>;
  const result = schema.safeParse(given);
  if (!result.success) throw refusal(result.error.issues, null);
  if (typeof result.data === 'object' && result.data !== null) parsedValues.set(result.data, schema);
  return result.data;
}

/** The refusal of these issues: a value past a parsing bound (SEMANTICS §12b) is its own error, naming the bound. */
function refusal(issues: z.core.$ZodIssue[], where: Where | null): ValidationError | InputTooComplexError {
  const bound = issues.find(boundOf);
  if (bound !== undefined) {
    const { loc, msg } = toValidationIssue(bound, where);
    return new InputTooComplexError({ bound: boundOf(bound)!, detail: msg, loc }, where !== null);
  }
  return new ValidationError(
    issues.map((issue) => toValidationIssue(issue, where)),
    where !== null,
  );
}

/** The bound a custom issue says its value is past (tooComplex's issues), or undefined. */
function boundOf(issue: z.core.$ZodIssue): string | undefined {
  const bound = issue.code === 'custom' ? (issue.params as { bound?: unknown } | undefined)?.bound : undefined;
  return typeof bound === 'string' ? bound : undefined;
}

function toValidationIssue(issue: z.core.$ZodIssue, where: Where | null): ValidationIssue {
  return {
    loc: [
      ...(where === null ? [] : typeof where === 'string' ? [where] : where),
      ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)),
    ],
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
