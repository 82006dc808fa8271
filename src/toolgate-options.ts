// createToolgate's options in one schema: every option the plugin takes, its check, and (through
// option-bounds.ts) its default and bounds. A key it does not list, or a bad value, is a
// ToolgateConfigError at construction, with the code and sentence the option's own check gives.
import type { Sequelize } from 'sequelize';
import { z } from 'zod';
import { checkAuthOptions, type ClientRoutes, type RoleOf } from '../middleware/auth';
import { checkBodyLimit } from '../middleware/json-body';
import { authenticatedSender, senderAsGiven } from '../middleware/sender-check';
import type { SenderCheck } from '../middleware/sender-check';
import { ROUTE_GROUPS, type RouteGroup } from '../routes/api-routes';
import { closestToolId } from './core/closest-tool';
import { isHostName } from './core/host-name';
import { isValidAuthservId } from './core/sender-authentication';
import { ToolgateConfigError, type ConfigErrorCode } from './errors';
import type { Embeddings } from './llm/embeddings';
import type { LanguageModel } from './llm/language-model';
import { OPTION_BOUNDS, OPTION_DEFAULTS, type AgentRunLimits } from './option-bounds';
import { checkPolicyCacheOptions, type PolicyCacheMode, type PolicyCacheSettings } from './policy-cache-options';
import { checkRateLimitOptions, type ClientRateLimitOptions } from './rate-limit-options';
import { checkRetentionOptions, type RetentionOptions, type RetentionSettings } from './retention-options';
import { checkSchemaName } from './db/schema';
import { checkMcpConfig, type McpConfigInput, type McpServerConfig } from './mcp/mcp-config';
import { checkHostTools } from './tools/check-host-tools';
import type { HostTool } from './tools/tool-registry';
import type { ToolgateLogger } from './toolgate-logger';
import { checkTracingOptions, type TracingOptions, type TracingSettings } from './tracing/tracing-options';

export interface RecoveryTimings {
  heartbeatMs: number;
  staleAfterMs: number;
  sweepIntervalMs: number;
  graceMs: number;
}

/**
 * An option checked by a function of its own, as one field of the schema: the check's
 * ToolgateConfigError becomes an issue that keeps its code, and what it returns is the option's
 * value (its default when the option is left out).
 */
function checkedBy<In, Out>(check: (given: In | undefined) => Out) {
  return z
    .custom<In>()
    .optional()
    .transform((given, ctx) => asIssue(ctx, () => check(given)));
}

/** Runs a check inside the schema: its ToolgateConfigError is an issue carrying the error's code. */
function asIssue<Out>(ctx: z.RefinementCtx, check: () => Out): Out {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof ToolgateConfigError)) throw err;
    ctx.addIssue({ code: 'custom', message: err.message, params: { code: err.code } });
    return z.NEVER;
  }
}

/** An option toolgate calls or hands on as it is (a function, an object): checked for its type only. */
function ofType<T>(name: string, takes: string, is: (given: unknown) => boolean) {
  return checkedBy<T, T | undefined>((given) => {
    if (given !== undefined && !is(given)) optionTypeError(name, takes, given);
    return given;
  });
}

function optionTypeError(name: string, takes: string, given: unknown): never {
  const shown = typeof given === 'function' ? 'a function' : (JSON.stringify(given) ?? typeof given);
  throw new ToolgateConfigError('ERR_TOOLGATE_OPTION_TYPE', `createToolgate({ ${name} }) takes ${takes}, not ${shown}.`);
}

const isFunction = (given: unknown) => typeof given === 'function';
const isBoolean = (given: unknown) => typeof given === 'boolean';
const isString = (given: unknown) => typeof given === 'string';
const isObject = (given: unknown): given is Record<string, unknown> => typeof given === 'object' && given !== null && !Array.isArray(given);
const MODEL_METHODS = ['analyzeEmail', 'writeReply', 'answerQuestion', 'chat', 'agentStep'] as const;

/** An option holding options of its own: a key it does not list is refused, with the one most likely meant. */
function refuseUnknownKeys(path: string, given: object, known: readonly string[]): void {
  for (const key of Object.keys(given)) {
    if (!known.includes(key)) throw unknownOptionError(key, known, path);
  }
}

/**
 * Which option a mistyped key most likely meant: camelCase names compared regardless of case, and a
 * key that is a name less its unit (`expiry` for `expiryMs`) taken for that name.
 */
function closestOption(key: string, known: readonly string[]): string | null {
  const lower = known.map((name) => name.toLowerCase());
  const guess = closestToolId(key, lower);
  if (guess !== null) return known[lower.indexOf(guess)];
  const stems = key.length >= 4 ? known.filter((name) => name.toLowerCase().startsWith(key.toLowerCase())) : [];
  return stems.length === 1 ? stems[0] : null;
}

function unknownOptionError(key: string, known: readonly string[], path?: string): ToolgateConfigError {
  const guess = closestOption(key, known);
  const at = path === undefined ? `{ ${key} }` : `{ ${path}: { ${key} } }`;
  return new ToolgateConfigError(
    'ERR_TOOLGATE_UNKNOWN_OPTION',
    `createToolgate(${at}) names no option${guess ? `: did you mean "${guess}"?` : '.'} The options${path === undefined ? '' : ` of ${path}`} are ${known.join(', ')}.`,
  );
}

function sequelizeOf(given: Sequelize | undefined): Sequelize {
  if (!given || typeof given.getDialect !== 'function' || given.getDialect() !== 'postgres') {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_DATABASE',
      'createToolgate() needs a Sequelize instance on PostgreSQL (dialect "postgres").',
    );
  }
  return given;
}

function routeGroupsOf(routes: Partial<Record<RouteGroup, boolean>> | undefined): ReadonlySet<RouteGroup> {
  const on = new Set<RouteGroup>(ROUTE_GROUPS);
  if (routes === undefined) return on;
  if (typeof routes !== 'object' || routes === null) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_ROUTES',
      `createToolgate({ routes }) takes an object such as { chat: false }, not ${JSON.stringify(routes)}.`,
    );
  }
  for (const [name, value] of Object.entries(routes)) {
    if (!(ROUTE_GROUPS as readonly string[]).includes(name)) {
      const guess = closestToolId(name, ROUTE_GROUPS);
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_ROUTES',
        `createToolgate({ routes: { ${name} } }) names no route group${guess ? `: did you mean "${guess}"?` : '.'} The groups are ${ROUTE_GROUPS.join(', ')}.`,
      );
    }
    if (typeof value !== 'boolean') {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_ROUTES',
        `createToolgate({ routes: { ${name}: ${JSON.stringify(value)} } }): say true or false.`,
      );
    }
    if (!value) on.delete(name as RouteGroup);
  }
  return on;
}

type AgentRunsOption = Partial<AgentRunLimits> & { messageIdDomain?: string };

function agentRunsOf(given: AgentRunsOption | undefined): { limits: AgentRunLimits; messageIdDomain: string } {
  if (given !== undefined) refuseUnknownKeys('agentRuns', given, [...Object.keys(OPTION_BOUNDS.agentRuns), 'messageIdDomain']);
  const limits: AgentRunLimits = { ...OPTION_DEFAULTS.agentRuns };
  for (const name of Object.keys(OPTION_BOUNDS.agentRuns) as (keyof AgentRunLimits)[]) {
    const value = given?.[name] ?? limits[name];
    const [min, max] = OPTION_BOUNDS.agentRuns[name];
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_AGENT_RUNS',
        `createToolgate({ agentRuns: { ${name}: ${JSON.stringify(value)} } }): give a whole number from ${min} to ${max}.`,
      );
    }
    limits[name] = value;
  }
  return { limits, messageIdDomain: messageIdDomainOf(given?.messageIdDomain) };
}

function messageIdDomainOf(given: string | undefined): string {
  if (given === undefined) return OPTION_DEFAULTS.messageIdDomain;
  if (typeof given !== 'string' || !isHostName(given.toLowerCase())) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_AGENT_RUNS',
      `createToolgate({ agentRuns: { messageIdDomain: ${JSON.stringify(given)} } }): give a host name, such as mail.thescoop.com.`,
    );
  }
  return given.toLowerCase();
}

function approvalExpiryOf(given: { expiryMs?: number } | undefined): number {
  if (given !== undefined) refuseUnknownKeys('approvals', given, ['expiryMs']);
  const value = given?.expiryMs ?? OPTION_DEFAULTS.approvalExpiryMs;
  const [min, max] = OPTION_BOUNDS.approvalExpiryMs;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_APPROVALS',
      `createToolgate({ approvals: { expiryMs: ${JSON.stringify(value)} } }): give a whole number of milliseconds from ${min} (a minute) to ${max} (30 days).`,
    );
  }
  return value;
}

/** The MCP sessions' settings, as given. */
export interface McpSessionsInput {
  ttlMs?: number;
  url?: string;
  pollMs?: number;
}

export interface McpSessionsSettings {
  ttlMs: number;
  /** An absolute URL, or a path resolved against the origin a session was opened at. */
  url: string;
  pollMs: number;
}

function mcpSessionsOf(given: McpSessionsInput | undefined): McpSessionsSettings {
  if (given !== undefined) refuseUnknownKeys('mcpSessions', given, Object.keys(OPTION_DEFAULTS.mcpSessions));
  const settings = { ...OPTION_DEFAULTS.mcpSessions, ...given };
  for (const name of ['ttlMs', 'pollMs'] as const) {
    const value = settings[name];
    const [min, max] = OPTION_BOUNDS.mcpSessions[name];
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_MCP_SESSIONS',
        `createToolgate({ mcpSessions: { ${name}: ${JSON.stringify(value)} } }): give a whole number of milliseconds from ${min} to ${max}.`,
      );
    }
  }
  if (typeof settings.url !== 'string' || !isEndpointUrl(settings.url)) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_MCP_SESSIONS',
      `createToolgate({ mcpSessions: { url: ${JSON.stringify(settings.url)} } }): give the path the MCP endpoint is mounted at, such as "/mcp", or an absolute http(s) URL.`,
    );
  }
  return settings;
}

function isEndpointUrl(url: string): boolean {
  if (/^\/[^/\\]/.test(url) || url === '/') return !/\s/.test(url);
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

/** A heartbeat must beat well inside the time it is trusted. */
function recoveryOf(given: Partial<RecoveryTimings> | undefined): RecoveryTimings {
  if (given !== undefined) refuseUnknownKeys('recovery', given, Object.keys(OPTION_DEFAULTS.recovery));
  const timings: RecoveryTimings = { ...OPTION_DEFAULTS.recovery, ...given };
  const [min, max] = OPTION_BOUNDS.recoveryMs;
  for (const [name, value] of Object.entries(timings)) {
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_RECOVERY',
        `createToolgate({ recovery: { ${name}: ${JSON.stringify(value)} } }): give a whole number of milliseconds from ${min} to ${max}.`,
      );
    }
  }
  if (timings.staleAfterMs < 2 * timings.heartbeatMs) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_RECOVERY',
      `createToolgate({ recovery }): staleAfterMs (${timings.staleAfterMs}) must be at least twice heartbeatMs (${timings.heartbeatMs}), or a live instance would be taken for dead.`,
    );
  }
  return timings;
}

function rateLimitOf(given: ClientRateLimitOptions | false | undefined): ClientRateLimitOptions | false {
  if (given === undefined || given === false) return false;
  if (isObject(given)) refuseUnknownKeys('rateLimit', given, ['windowMs', 'limit', 'store']);
  return checkRateLimitOptions(given);
}

function hostToolsOf(given: readonly HostTool[] | undefined): readonly HostTool[] {
  if (given === undefined) return [];
  if (!Array.isArray(given)) optionTypeError('tools', 'a list of tools (defineTool)', given);
  return checkHostTools(given);
}

function authservIdOf(given: string | undefined): string | undefined {
  if (given !== undefined && !isValidAuthservId(given)) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_AUTHSERV_ID',
      `createToolgate({ authservId: ${JSON.stringify(given)} }) is not an authserv-id: give the one your receiving mail server stamps on Authentication-Results, such as "mx.example.com" (one token, no spaces or ";").`,
    );
  }
  return given;
}

/** How a message's sender counts, and whether the host chose it (a toolgate nobody told warns at construction). */
export interface SenderChoice {
  check: SenderCheck;
  chosen: boolean;
}

/** authservId is a shorthand for one senderCheck, so the two together are two answers to one question. */
function senderChoiceOf(options: { authservId?: string; senderCheck?: SenderCheck }): SenderChoice {
  const { authservId, senderCheck } = options;
  if (authservId !== undefined && senderCheck !== undefined) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_SENDER_CHECK',
      `createToolgate({ authservId: ${JSON.stringify(authservId)}, senderCheck }) gives two answers to how a sender counts: authservId is senderCheck: authenticatedSender(${JSON.stringify(authservId)}). Give one of them.`,
    );
  }
  if (authservId !== undefined) return { check: authenticatedSender(authservId), chosen: true };
  if (senderCheck !== undefined) return { check: senderCheck, chosen: true };
  return { check: senderAsGiven, chosen: false };
}

/**
 * Every option of createToolgate. The tokens, clientRoutes, roleOf and allowedHosts are one choice
 * of who calls the client routes, so they are checked together, after each option on its own; so
 * are authservId and senderCheck, two ways of saying how a sender counts.
 */
export const toolgateOptionsSchema = z
  .strictObject({
    /** A Sequelize instance on PostgreSQL; toolgate defines its models on it. */
    sequelize: z.custom<Sequelize>().transform((given, ctx) => asIssue(ctx, () => sequelizeOf(given))),
    /**
     * Whether tg.migrate() adopts the legacy application's tables (agents, tool_calls, documents,
     * tasks) where the database has them: their columns and rows kept, toolgate's columns, keys and
     * indexes added. Default false: a database holding a table of one of toolgate's names that
     * toolgate did not create is refused before anything changes (HostTablesError).
     */
    adoptLegacyTables: ofType<boolean>('adoptLegacyTables', 'true or false', isBoolean),
    /**
     * A PostgreSQL schema of toolgate's own, which tg.migrate() creates: every table, function and
     * trigger of toolgate's, and its SequelizeMeta, go there and nowhere else. toolgate then runs its
     * queries on a pool of its own whose connections search that schema alone (made from the
     * `sequelize` given, with its pool settings), unless that Sequelize already does
     * (createSequelize(url, { schema })); host tools still get the host's Sequelize. Default: none,
     * the tables go where the connection's search_path puts them (public).
     */
    schema: checkedBy<string, string | undefined>((given) =>
      given === undefined ? undefined : checkSchemaName(given, 'createToolgate({ schema })'),
    ),
    /** Route groups to leave out of `router`, e.g. `{ chat: false, documents: false }`. Default: all on. */
    routes: checkedBy(routeGroupsOf),
    /**
     * Agent runs: bounds on one run (model steps, default 8; tool calls, default 16; characters of a
     * thread's history the model reads, default 32,000), and the domain of the Message-IDs its replies
     * get (default `toolgate.invalid`: set your own mail domain).
     */
    agentRuns: checkedBy(agentRunsOf),
    /** Approval requests (SEMANTICS §12): how long one waits for its decision before it expires. Default 72 hours. */
    approvals: checkedBy(approvalExpiryOf),
    /**
     * After a crash (SEMANTICS §13): how often an instance beats its heartbeat (default 5 s), after how
     * long a silent one is dead (30 s), how often the sweeper runs (15 s), and the grace added to a
     * tool's timeout before a dead instance's `started` record is called interrupted (30 s).
     */
    recovery: checkedBy(recoveryOf),
    /**
     * How long records (tool calls, runs) are kept: `'90d'`, or `{ keep: '90d', partitions: 'day' }`
     * (a partition spans a month by default). The sweeper drops whole partitions older than that,
     * never one that holds a started call, an open run or a pending approval. Default: every record
     * is kept.
     */
    retention: checkedBy<string | RetentionOptions, RetentionSettings>((given) => checkRetentionOptions(given)),
    /** The host's own tools, beside the four builtins. */
    tools: checkedBy(hostToolsOf),
    /**
     * MCP sessions (SEMANTICS §14): how long one lasts (default 15 minutes), the URL its opening
     * answers (default `/mcp`, resolved against the origin it was opened at: mount tg.mcpEndpoint
     * there), and how often live connections are checked for a changed listing (default 2 s).
     */
    mcpSessions: checkedBy(mcpSessionsOf),
    /**
     * MCP servers whose tools join the manifest (SEMANTICS §14), in the format of an MCP client's
     * configuration file: `{ mcpServers: { files: { command, args, env } | { url, headers } } }`.
     */
    mcp: checkedBy<McpConfigInput, readonly McpServerConfig[]>((given) => checkMcpConfig(given)),
    /**
     * How runs get their agent's compiled policy: `listen` (the default: cached per instance, dropped
     * on PostgreSQL notifications, read through while the LISTEN does not hold; its connection never
     * keeps the process alive, and close() ends it), `strict` (cached, checked against the agent's
     * policy version with one indexed read per run, for PgBouncer in transaction mode) or `off` (one
     * query and a compile per run).
     */
    policyCache: checkedBy<PolicyCacheMode | PolicyCacheSettings, ReturnType<typeof checkPolicyCacheOptions>>(checkPolicyCacheOptions),
    /**
     * A per-caller budget on the client routes (admin and scheduler are not limited). Default off.
     * Counted in the database (`store: 'postgres'`, the default), so every instance shares it.
     */
    rateLimit: checkedBy(rateLimitOf),
    /**
     * What toolgate's spans carry (SEMANTICS §16): the sender's routing key (`routingKey`: `'none'`,
     * the default, `'hashed'` or `'plain'`) and the message's text, the reply, and tools' arguments
     * and results (`content`, default false). Spans go through @opentelemetry/api to the host's SDK,
     * and nowhere without one; `false` makes none at all.
     */
    tracing: checkedBy<TracingOptions | false, TracingSettings | false>(checkTracingOptions),
    /** The JSON body cap of the router. Default `1mb`. */
    bodyLimit: checkedBy<string, string>((given) => checkBodyLimit(given ?? OPTION_DEFAULTS.bodyLimit)),
    /**
     * The authserv-id of your receiving mail server (SEMANTICS §7): a sender counts only when that
     * server's Authentication-Results vouch for its From. Short for `senderCheck: authenticatedSender(id)`.
     */
    authservId: checkedBy(authservIdOf),
    /**
     * How a message's sender counts (SEMANTICS §7). Default: taken as given, with a warning at
     * construction; `senderAsGiven` chooses that without one.
     */
    senderCheck: ofType<SenderCheck>('senderCheck', 'a function from a request and a sender to a routing key or null', isFunction),
    /** The model behind analysis, replies, answers and chat. Default: the local, offline model. */
    model: ofType<LanguageModel>(
      'model',
      `a LanguageModel (an object with ${MODEL_METHODS.join(', ')})`,
      (m) => isObject(m) && MODEL_METHODS.every((k) => isFunction(m[k])),
    ),
    /**
     * The provider of semantic document search (OpenAIEmbeddings, or your own). Default: none,
     * search by words only, and nothing sent anywhere.
     */
    embeddings: ofType<Embeddings>(
      'embeddings',
      'an Embeddings (an object with a model name and an embed(texts) method), such as an OpenAIEmbeddings',
      (e) => isObject(e) && isString(e.model) && e.model.trim() !== '' && isFunction(e.embed),
    ),
    /** Where toolgate reports what it cannot answer a request with. Default: nowhere. */
    logger: ofType<ToolgateLogger>(
      'logger',
      'a logger with an error(details, message) method (pino, or a console wrapper)',
      (l) => isObject(l) && isFunction(l.error),
    ),
    adminToken: ofType<string>('adminToken', 'a string', isString),
    schedulerToken: ofType<string>('schedulerToken', 'a string', isString),
    clientTokens: ofType<readonly string[]>('clientTokens', 'a list of strings', (t) => Array.isArray(t) && t.every(isString)),
    /** A token that reads GET /metrics and nothing else (the admin token reads it too). */
    metricsToken: ofType<string>('metricsToken', 'a string', isString),
    /**
     * `'open'` serves the client routes to callers with no token (the legacy behaviour); the default,
     * `'authenticated'`, serves them only to a client token or a caller `roleOf` gives a role.
     */
    clientRoutes: z.custom<ClientRoutes>().optional(),
    /** The host's own authentication: the role of a request that carries no toolgate token. */
    roleOf: z.custom<RoleOf>().optional(),
    /** With `clientRoutes: 'open'`: host names the router answers beside loopback names and IP addresses. */
    allowedHosts: z.custom<readonly string[]>().optional(),
  })
  .transform((options, ctx) => ({
    ...options,
    auth: asIssue(ctx, () => checkAuthOptions(options)),
    senders: asIssue(ctx, () => senderChoiceOf(options)),
  }));

/** What a host passes to createToolgate. */
export type ToolgateOptions = z.input<typeof toolgateOptionsSchema>;
/** The options checked, with their defaults in place. */
export type CheckedToolgateOptions = z.output<typeof toolgateOptionsSchema>;

/** The option names, as the schema lists them (README.md's options table is held to this list). */
export const TOOLGATE_OPTION_NAMES: readonly string[] = Object.keys(toolgateOptionsSchema.in.shape);

/** Checks createToolgate's options at once; the first thing wrong is the ToolgateConfigError thrown. */
export function checkToolgateOptions(given: ToolgateOptions): CheckedToolgateOptions {
  if (!isObject(given)) sequelizeOf(undefined);
  const parsed = toolgateOptionsSchema.safeParse(given);
  if (parsed.success) return parsed.data;
  // A mistyped key first: the value it was meant to give is missing, which the other issues may only echo.
  const unknown = parsed.error.issues.find((issue) => issue.code === 'unrecognized_keys');
  if (unknown) throw unknownOptionError(unknown.keys[0], TOOLGATE_OPTION_NAMES);
  const first = parsed.error.issues[0];
  const code = first.code === 'custom' ? (first.params?.code as ConfigErrorCode | undefined) : undefined;
  throw new ToolgateConfigError(code ?? 'ERR_TOOLGATE_OPTION_TYPE', first.message);
}
