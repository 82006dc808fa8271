// The OpenAPI 3.1 document, built from the routes' own descriptions: request shapes are the zod
// schemas the handlers parse with (as JSON Schema 2020-12, which OpenAPI 3.1 uses as is), and each
// operation lists the errors its description implies.
import { z } from 'zod';
import type { DescribedSection, RouteDescription } from '../../../routes/route';
import { ERROR_CODES, type ErrorCode } from '../../errors';
import { idText } from '../../http/fields';

/** Every error body (HTTP.md, "Errors"); `detail` is a list only for validation_error. */
const errorBodySchema = z.object({
  detail: z.union([z.string(), z.array(z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() }))]),
  code: z.string().describe('stable: branch on it, never on detail'),
  request_id: z.string().optional(),
  tool: z.string().optional().describe('on tool_forbidden and not_dispatchable'),
  reason: z.literal('tool_changed').optional().describe('on tool_forbidden of a held MCP tool: its server changed its definition'),
  bound: z.string().optional().describe('on input_too_complex: the parsing bound the input is past, such as json_depth'),
  loc: z
    .array(z.union([z.string(), z.number()]))
    .optional()
    .describe('on input_too_complex: where the value past the bound is, as in validation_error'),
  report: z
    .looseObject({})
    .optional()
    .describe("on parity_mismatch: the migration's report, as POST /api/migrations/enabled-tools answers it"),
});

export interface DocumentOptions {
  title: string;
  version: string;
  description: string;
  /** Where each list of routes is mounted: `/api` for the router, `` for the app's own. */
  mounts: readonly { prefix: string; sections: readonly DescribedSection[] }[];
}

type JsonSchema = Record<string, unknown>;
type Operation = Record<string, unknown>;
export function openApiDocument(options: DocumentOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, Operation>> = {};
  const tags: { name: string }[] = [];
  for (const mount of options.mounts) {
    for (const group of mount.sections) {
      if (!tags.some((t) => t.name === group.tag)) tags.push({ name: group.tag });
      for (const route of group.routes) {
        const path = openApiPath(mount.prefix + route.path);
        (paths[path] ??= {})[route.method] = operation(route, group.tag, path);
      }
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: options.title, version: options.version, description: options.description, license: { name: 'MIT', identifier: 'MIT' } },
    tags,
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'The admin, scheduler or a client token (README, Configuration).' },
      },
      schemas: { Error: jsonSchema(errorBodySchema, 'output') },
    },
  };
}

/** `/agents/:id` → `/agents/{id}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function operation(route: RouteDescription, tag: string, path: string): Operation {
  const pathParams = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
  const parameters = [
    ...pathParams.map((name) => {
      const own = route.params?.[name];
      return own
        ? { name, in: 'path', required: true, schema: jsonSchema(own, 'input') }
        : {
            name,
            in: 'path',
            required: true,
            description: 'an id: a positive whole number in plain decimal',
            schema: jsonSchema(idText, 'input'),
          };
    }),
    ...(route.query ? queryParameters(route.query) : []),
    ...(route.idempotent ? [IDEMPOTENCY_KEY] : []),
  ];
  const ids = pathParams.filter((name) => !route.params?.[name]);
  const op: Operation = {
    operationId: operationId(route.method, path),
    tags: [tag],
    summary: route.summary,
    description: [route.description, whoMayCall(route)].filter(Boolean).join('\n\n'),
    security: route.roles === 'anyone' ? [] : [{ bearer: [] }],
    responses: {
      ...Object.fromEntries(
        [route.success, ...(route.also ?? [])].map((answer: RouteDescription['success']) => [
          String(answer.status),
          {
            description: answer.description,
            ...(answer.schema
              ? { content: { [answer.contentType ?? 'application/json']: { schema: jsonSchema(answer.schema, 'output') } } }
              : {}),
            ...(answer.headers
              ? {
                  headers: Object.fromEntries(
                    Object.entries(answer.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
                  ),
                }
              : {}),
          },
        ]),
      ),
      ...errorResponses(impliedErrors(route, ids.length > 0, path.startsWith('/api/'))),
    },
  };
  if (parameters.length > 0) op.parameters = parameters;
  if (route.body) {
    op.requestBody = { required: route.bodyRequired ?? true, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } };
  }
  return op;
}

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe (SEMANTICS §13): the same key with the same body gets the first answer again (header Idempotent-Replayed: true) and runs nothing; kept 24 hours, per caller and route. 1 to 255 printable ASCII characters, such as a UUID.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

function whoMayCall(route: RouteDescription): string {
  if (route.roles === 'anyone') return 'No token needed.';
  const roles = route.roles.filter((r) => r !== 'admin');
  const open = route.roles.includes('client')
    ? ' While no client token is configured, client routes are open to callers with no token.'
    : '';
  return `Who may call: ${roles.length === 0 ? 'the admin token' : `the ${roles.join(' or ')} token, or the admin token`}.${open}`;
}

/** The errors a route can answer, from what its description says it reads and who may call it. */
export function impliedErrors(route: RouteDescription, hasPathIds: boolean, underApi: boolean): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors ?? []);
  if (route.idempotent) ['idempotency_key_reused', 'idempotency_key_in_flight', 'interrupted'].forEach((c) => codes.add(c as ErrorCode));
  // The router takes no new requests once it drains for a shutdown, and while its client routes are
  // open it answers only the host names it may be reached by.
  if (underApi) ['shutting_down', 'host_not_allowed'].forEach((c) => codes.add(c as ErrorCode));
  if (route.roles !== 'anyone') ['unauthenticated', 'forbidden', 'unavailable', 'tables_missing'].forEach((c) => codes.add(c as ErrorCode));
  if (route.roles !== 'anyone' && route.roles.includes('client')) codes.add('rate_limited');
  // A path parameter, an id or one with a schema of its own, is refused when malformed and names something that may not exist.
  if (hasPathIds || route.params) ['not_found', 'validation_error'].forEach((c) => codes.add(c as ErrorCode));
  if (route.query) codes.add('validation_error');
  if (route.body)
    ['invalid_json', 'payload_too_large', 'unsupported_media_type', 'validation_error', 'input_too_complex'].forEach((c) =>
      codes.add(c as ErrorCode),
    );
  codes.add('internal_error');
  return [...codes];
}

function errorResponses(codes: readonly ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_CODES[code].status, [...(byStatus.get(ERROR_CODES[code].status) ?? []), code]);
  return Object.fromEntries(
    [...byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, list]) => [
        String(status),
        {
          description: list.map((c) => `\`${c}\`: ${ERROR_CODES[c].meaning}`).join('; '),
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      ]),
  );
}

function queryParameters(schema: z.ZodType): Record<string, unknown>[] {
  const object = jsonSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: (object.required ?? []).includes(name),
    schema: property,
  }));
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

function operationId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return [method, ...words].join('_');
}
