// zod pieces shared by the routes: ids in paths, bounded text, tool ids and gate patterns (the
// pattern is parsed and normalized by the core, so a bad one is a 422 saying why).
import { z } from 'zod';
import { parsePattern } from '../core/pattern';
import { ruleKindSchema } from '../core/types';

/** Path ids: positive integers that fit PostgreSQL's integer, else a 404 would hide a typo. */
export const idParam = z.coerce.number().int('an id is a whole number').positive('an id is positive').max(2147483647, 'an id is at most 2147483647');

// Control characters other than tab and newlines have no business in names and prose.
const NO_CONTROL = /^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/;

export function text(max: number) {
  return z.string().max(max, `at most ${max} characters`).regex(NO_CONTROL, 'control characters are not allowed');
}

export function name(max: number) {
  return text(max)
    .transform((s) => s.trim())
    .pipe(z.string().min(1, 'must not be empty').regex(/^[^\n\r\t]*$/, 'a name is one line'));
}

export const patternSchema = z.string().transform((value, ctx) => {
  const parsed = parsePattern(value);
  if (!parsed.ok) {
    ctx.addIssue({ code: 'custom', message: parsed.reason, params: { type: 'invalid_pattern' } });
    return z.NEVER;
  }
  return parsed.pattern;
});

export const ruleSchema = z.strictObject({ kind: ruleKindSchema, pattern: patternSchema });

export const rulesSchema = z.array(ruleSchema).max(500, 'at most 500 rules on one attachment');

/** The raw values of a message's Authentication-Results headers (SEMANTICS §7), bounded. */
export const authenticationResultsSchema = z.array(text(16384)).max(64, 'at most 64 Authentication-Results headers');
