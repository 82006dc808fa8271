// The MCP servers a deployment names, in the file format MCP clients already read:
// {"mcpServers": {"<name>": {"command", "args", "env"} | {"url", "headers"}}}. Checked once, when
// toolgate is built. `${VAR}` in env, headers and url is a reference to the environment: checked
// to exist here, read only when the server is connected (mcp-transport-params.ts), and never kept in
// anything a view, a log line or an error shows.
import { z } from 'zod';
import { ToolgateConfigError } from '../errors';
import { OPTION_BOUNDS, OPTION_DEFAULTS } from '../option-bounds';

/**
 * A server's name: snake_case, at most 14 characters, so that `<name>__<tool>` fits a tool id's 64
 * for every tool name MCP servers are taken with (48 characters, mcp-tool-id.ts).
 */
export const MAX_SERVER_NAME = 14;
export const serverNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/, 'a server name is snake_case: lowercase letters, digits and single underscores')
  .max(MAX_SERVER_NAME);

const [minTimeout, maxTimeout] = OPTION_BOUNDS.toolTimeoutMs;
/** The deadline of one call of the server's tools (toolgate's own key beside the usual ones). */
const timeoutMs = z.number().int().min(minTimeout).max(maxTimeout).default(OPTION_DEFAULTS.toolTimeoutMs);

const stdioServerSchema = z.strictObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string().min(1), z.string()).default({}),
  cwd: z.string().min(1).optional(),
  timeoutMs,
});

const httpServerSchema = z.strictObject({
  type: z.enum(['http', 'streamable-http']).optional(),
  url: z.string().min(1),
  headers: z.record(z.string().min(1), z.string()).default({}),
  timeoutMs,
});

export const mcpConfigSchema = z.strictObject({
  mcpServers: z.record(serverNameSchema, z.union([stdioServerSchema, httpServerSchema])),
});

/** The `mcp` option as given: the object an MCP configuration file holds. */
export type McpConfigInput = z.input<typeof mcpConfigSchema>;

export type StdioServerConfig = z.output<typeof stdioServerSchema> & { transport: 'stdio' };
export type HttpServerConfig = z.output<typeof httpServerSchema> & { transport: 'http' };
export type McpServerConfig = (StdioServerConfig | HttpServerConfig) & { name: string };

/** `${NAME}`: the one form of reference; any other text is kept as written. */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The variables a text refers to, each once, in order. */
function referencedVariables(text: string): string[] {
  return [...new Set([...text.matchAll(REFERENCE)].map((m) => m[1]!))];
}

/** The text with each `${NAME}` replaced by what `lookup` gives. */
export function expandReferences(text: string, lookup: (name: string) => string): string {
  return text.replace(REFERENCE, (_whole, name: string) => lookup(name));
}

/** Where a server's references are: each field that may hold one, by its place in the file. */
function referencingFields(server: McpServerConfig): { field: string; text: string }[] {
  if (server.transport === 'stdio') return Object.entries(server.env).map(([key, text]) => ({ field: `env.${key}`, text }));
  return [{ field: 'url', text: server.url }, ...Object.entries(server.headers).map(([key, text]) => ({ field: `headers.${key}`, text }))];
}

/**
 * The configuration checked: its shape, its urls, and that every variable it refers to is set in
 * `env`. A mistake is a ToolgateConfigError naming the server and the field, never a value.
 */
export function checkMcpConfig(given: unknown, env: NodeJS.ProcessEnv = process.env): readonly McpServerConfig[] {
  if (given === undefined) return [];
  const parsed = mcpConfigSchema.safeParse(given);
  if (!parsed.success) {
    // zod's messages name what was expected, never the value given, so none can show a secret.
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'the configuration'}: ${i.message}`).join('; ');
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_MCP_CONFIG',
      `The MCP configuration is not {"mcpServers": {"<name>": {"command", "args", "env"} | {"url", "headers"}}}: ${problems}.`,
    );
  }
  const servers = Object.entries(parsed.data.mcpServers).map(([name, server]): McpServerConfig =>
    'command' in server ? { ...server, name, transport: 'stdio' } : { ...server, name, transport: 'http' },
  );
  for (const server of servers) {
    for (const { field, text } of referencingFields(server)) {
      for (const variable of referencedVariables(text)) {
        if (env[variable] !== undefined) continue;
        throw new ToolgateConfigError(
          'ERR_TOOLGATE_MCP_ENV',
          `The MCP server "${server.name}" refers to \${${variable}} in ${field}, and the environment does not set ${variable}: set it before toolgate starts.`,
        );
      }
    }
    if (server.transport === 'http' && !isHttpUrl(expandReferences(server.url, () => 'x'))) {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_MCP_CONFIG',
        `The MCP server "${server.name}" has a url that is not an http:// or https:// URL: give the address of its Streamable HTTP endpoint.`,
      );
    }
  }
  return servers;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
