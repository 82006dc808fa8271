// An MCP tool's input, checked against the JSON Schema its server gave, by Ajv (with formats), as a
// zod schema whose check is that validator: the one dispatch path parses every tool's input with
// zod (a 422 naming the field, nothing recorded as run), so an MCP tool goes through it unchanged.
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { z } from 'zod';

type Dialect = 'draft-07' | '2019-09' | '2020-12';

/** One Ajv per dialect, shared: each compiled validator stays with the tool it checks. */
const validators = new Map<Dialect, Ajv>();

function ajvFor(dialect: Dialect): Ajv {
  let ajv = validators.get(dialect);
  if (!ajv) {
    // Unknown keywords are ignored, as a server's own validator would; formats are checked.
    const options = { strict: false, allErrors: true };
    ajv = dialect === '2020-12' ? new Ajv2020(options) : dialect === '2019-09' ? new Ajv2019(options) : new Ajv(options);
    addFormats(ajv);
    validators.set(dialect, ajv);
  }
  return ajv;
}

function dialectOf(schema: Record<string, unknown>): Dialect {
  const named = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (named.includes('2020-12')) return '2020-12';
  if (named.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

function compile(schema: Record<string, unknown>): ValidateFunction {
  // The dialect is chosen from $schema; Ajv would look the URI up again and refuse ones it lacks.
  const { $schema: _dialect, ...rest } = schema;
  return ajvFor(dialectOf(schema)).compile(rest);
}

/** Why the schema cannot be checked (Ajv's own words), or null. */
export function schemaProblem(schema: Record<string, unknown>): string | null {
  try {
    compile(schema);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message.slice(0, 300) : 'Ajv cannot compile it';
  }
}

/**
 * The zod schema of a tool's input: the value as given (no input is `{}`), refused with one issue
 * per error Ajv finds, each at the field it names. Throws when the schema cannot be compiled.
 */
export function jsonSchemaInput(schema: Record<string, unknown>): z.ZodType<Record<string, unknown>> {
  const validate = compile(schema);
  return z.unknown().transform((given, ctx) => {
    const input = given === undefined || given === null ? {} : given;
    if (validate(input)) return input as Record<string, unknown>;
    for (const error of (validate.errors ?? []).slice(0, MAX_ISSUES)) {
      ctx.addIssue({ code: 'custom', path: pathOf(error), message: error.message ?? `breaks ${error.keyword}` });
    }
    return z.NEVER;
  });
}

const MAX_ISSUES = 20;

/** The field an error is about, as zod's path: `/items/0` and, for a missing property, its name. */
function pathOf(error: ErrorObject): (string | number)[] {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((part) => (/^(?:0|[1-9]\d*)$/.test(part) ? Number(part) : part));
  const missing = (error.params as { missingProperty?: unknown }).missingProperty;
  return typeof missing === 'string' ? [...path, missing] : path;
}
