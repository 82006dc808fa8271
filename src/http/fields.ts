// zod pieces shared by the routes: ids in paths, bounded text, tool ids and gate patterns (the
// pattern is parsed and normalized by the core, so a bad one is a 422 saying why).
import { z } from 'zod';
import { addressFieldsBreach, type AddressFields } from '../core/address-bounds';
import { MAX_AUTHENTICATION_RESULTS_LENGTH } from '../core/authentication-results';
import { parsePattern } from '../core/pattern';
import { MAX_AUTHENTICATION_RESULTS_HEADERS } from '../core/sender-authentication';
import { ruleKindSchema } from '../core/types';

// Ids are canonical decimals and nothing else (HTTP.md): `1e0`, `0x1`, `00001`, `+1` or ` 1` are not
// agent 1, so a proxy rule written for /agents/1/ means what it says.
export const CANONICAL_ID = /^[1-9][0-9]{0,15}$/;
const CANONICAL_ID_MESSAGE = 'an id is a positive whole number in plain decimal, such as 42: no sign, leading zero, space, exponent or hex';

/** The largest id of our rows (PostgreSQL integer): a canonical id above it names no row. */
export const MAX_ROW_ID = 2147483647;

/** An id as text, in a path or a query: canonical decimal, else a 422. */
export const idText = z.string().regex(CANONICAL_ID, CANONICAL_ID_MESSAGE).transform(Number);

/** An id in a JSON body: a whole number, or the same number as canonical decimal text. */
export const bodyId = z
  .union([z.number().int(CANONICAL_ID_MESSAGE).positive(CANONICAL_ID_MESSAGE), idText])
  .pipe(z.number().max(MAX_ROW_ID, `no record has an id above ${MAX_ROW_ID}`));

// Control characters other than tab and newlines have no business in names and prose.
const NO_CONTROL = /^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/;

/** A message body fits under the body limit anyway; the cap keeps one field from taking all of it. */
export const MAX_BODY_CHARS = 500_000;

export function text(max: number) {
  return z.string().max(max, `at most ${max} characters`).regex(NO_CONTROL, 'control characters are not allowed');
}

export function name(max: number) {
  return text(max)
    .transform((s) => s.trim())
    .pipe(
      z
        .string()
        .min(1, 'must not be empty')
        .regex(/^[^\n\r\t]*$/, 'a name is one line'),
    );
}

/**
 * A zod check refusing address fields past the parser's bounds (SEMANTICS §12b): parse() answers
 * it as 422 input_too_complex naming the bound, before anything reads the addresses.
 */
export function addressBounds(fields: AddressFields, ctx: z.core.$RefinementCtx): void {
  const breach = addressFieldsBreach(fields);
  if (breach !== null) ctx.addIssue({ code: 'custom', message: breach.detail, path: breach.loc, params: { bound: breach.bound } });
}

/** A sender's address as a route takes it: text within the address bounds. */
export const senderText = text(1000).superRefine((sender, ctx) => {
  const breach = addressFieldsBreach({ sender });
  if (breach !== null) ctx.addIssue({ code: 'custom', message: breach.detail, params: { bound: breach.bound } });
});

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

/** The raw values of a message's Authentication-Results headers (SEMANTICS §7), within the bounds the sender check reads. */
export const authenticationResultsSchema = z
  .array(text(MAX_AUTHENTICATION_RESULTS_LENGTH))
  .max(MAX_AUTHENTICATION_RESULTS_HEADERS, `at most ${MAX_AUTHENTICATION_RESULTS_HEADERS} Authentication-Results headers`);
