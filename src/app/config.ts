// The service's configuration, read from the environment once at start and checked with zod, so a
// bad value stops the service with a sentence naming the variable instead of failing later.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import type { ClientRoutes } from '../../middleware/auth';
import { isBodyLimit } from '../../middleware/json-body';
import { isValidAuthservId } from '../core/sender-authentication';
import { isHostName } from '../core/host-name';
import { DEMO_SETTINGS, type DemoSetting } from './demo/demo-mode';
import { checkSchemaName } from '../db/schema';
import { ToolgateConfigError } from '../errors';
import { LOG_FORMATS, type LogFormat } from './logger';
import { HOUR_MS, OPTION_BOUNDS, OPTION_DEFAULTS, type AgentRunLimits } from '../option-bounds';
import { checkPolicyCacheOptions, POLICY_CACHE_MODES, type PolicyCacheSettings } from '../policy-cache-options';
import { parseRateLimitSetting, RATE_LIMIT_STORES, type ClientRateLimitOptions } from '../rate-limit-options';
import { checkRetentionOptions, type RetentionSettings } from '../retention-options';
import { TRACE_ROUTING_KEYS, TRACING_DEFAULTS, type TracingSettings } from '../tracing/tracing-options';

const optionalText = z
  .string()
  .transform((s) => s.trim())
  .optional()
  .transform((s) => (s ? s : undefined));

/** A whole number in an option's bounds, with its default: the plugin's own (option-bounds.ts). */
function whole([min, max]: readonly [number, number], fallback: number) {
  return z.coerce.number().int().min(min).max(max).default(fallback);
}

/** An agent-run bound, in the range and with the default the plugin itself checks. */
function limit(name: keyof AgentRunLimits) {
  return whole(OPTION_BOUNDS.agentRuns[name], OPTION_DEFAULTS.agentRuns[name]);
}

// The approval expiry in whole hours: from the first whole hour in the option's range to its last.
const APPROVAL_EXPIRY_HOURS = OPTION_BOUNDS.approvalExpiryMs.map((ms, i) =>
  i === 0 ? Math.ceil(ms / HOUR_MS) : Math.floor(ms / HOUR_MS),
) as [number, number];

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  DATABASE_URL: optionalText,
  TOOLGATE_DATA_DIR: z.string().default('.toolgate'),
  TOOLGATE_ADMIN_TOKEN: optionalText,
  TOOLGATE_SCHEDULER_TOKEN: optionalText,
  TOOLGATE_METRICS_TOKEN: optionalText.refine(
    (t) => t === undefined || t.length >= OPTION_BOUNDS.tokenLength,
    `a token of at least ${OPTION_BOUNDS.tokenLength} characters (openssl rand -hex 32)`,
  ),
  TOOLGATE_POLICY_CACHE: z.enum(POLICY_CACHE_MODES).default(OPTION_DEFAULTS.policyCache.mode),
  TOOLGATE_POLICY_CACHE_MAX_AGENTS: whole(OPTION_BOUNDS.policyCache.maxAgents, OPTION_DEFAULTS.policyCache.maxAgents),
  TOOLGATE_POLICY_CACHE_MAX_AGE_MS: whole(OPTION_BOUNDS.policyCache.maxAgeMs, OPTION_DEFAULTS.policyCache.maxAgeMs),
  TOOLGATE_RATE_LIMIT_STORE: z.enum(RATE_LIMIT_STORES).default(OPTION_DEFAULTS.rateLimitStore),
  TOOLGATE_CLIENT_TOKENS: optionalText,
  // While the client routes are open: the names, beside loopback ones and IP addresses, the API answers to.
  TOOLGATE_ALLOWED_HOSTS: optionalText
    .transform((text) =>
      (text ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    )
    .refine((hosts) => hosts.every(isHostName), 'comma-separated host names alone, such as toolgate.internal (no scheme, port or path)'),
  TOOLGATE_AUTHSERV_ID: optionalText.refine(
    (id) => id === undefined || isValidAuthservId(id),
    'an authserv-id is the name your receiving mail server stamps, e.g. mx.example.com',
  ),
  TOOLGATE_BODY_LIMIT: z.string().refine(isBodyLimit, 'a size such as 1mb or 512kb').default(OPTION_DEFAULTS.bodyLimit),
  TOOLGATE_DEMO: z.enum(DEMO_SETTINGS).default('auto'),
  TOOLGATE_ADOPT_LEGACY_TABLES: z.enum(['on', 'off']).default('off'),
  TOOLGATE_DB_SCHEMA: optionalText.transform((name, ctx) => {
    if (name === undefined) return undefined;
    try {
      return checkSchemaName(name, 'TOOLGATE_DB_SCHEMA');
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  }),
  TOOLGATE_LOG: z.enum(['info', 'silent']).default('info'),
  TOOLGATE_LOG_FORMAT: z.enum(LOG_FORMATS).default('auto'),
  TOOLGATE_DB_QUERY_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(5_000),
  TOOLGATE_EMBEDDING_SWEEP_S: z.coerce.number().int().min(5).max(86_400).default(60),
  TOOLGATE_AGENT_MAX_STEPS: limit('maxSteps'),
  TOOLGATE_AGENT_MAX_TOOL_CALLS: limit('maxToolCalls'),
  TOOLGATE_AGENT_HISTORY_CHARS: limit('historyChars'),
  TOOLGATE_MESSAGE_ID_DOMAIN: optionalText.refine(
    (d) => d === undefined || isHostName(d.toLowerCase()),
    'a host name, such as mail.thescoop.com',
  ),
  // The MCP servers' configuration file (SEMANTICS §14): read at start, checked by createToolgate.
  TOOLGATE_MCP_CONFIG: optionalText,
  TOOLGATE_RETENTION: optionalText.transform((text, ctx) => {
    try {
      return checkRetentionOptions(text ?? 'off', 'TOOLGATE_RETENTION').keepDays;
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  }),
  TOOLGATE_PARTITIONS: z.enum(['month', 'day']).default('month'),
  TOOLGATE_APPROVAL_EXPIRY_HOURS: whole(APPROVAL_EXPIRY_HOURS, OPTION_DEFAULTS.approvalExpiryMs / HOUR_MS),
  TOOLGATE_SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(25_000),
  // Express's "trust proxy": off, a number of hops, or addresses/subnets/names (loopback, ...).
  TOOLGATE_TRUST_PROXY: z
    .string()
    .default('off')
    .transform((text): TrustProxy => {
      const value = text.trim();
      if (value === '' || value.toLowerCase() === 'off') return false;
      return /^\d{1,2}$/.test(value) ? Number(value) : value;
    }),
  TOOLGATE_TRACE_ROUTING_KEY: z.enum(TRACE_ROUTING_KEYS).default(TRACING_DEFAULTS.routingKey),
  TOOLGATE_TRACE_CONTENT: z.enum(['on', 'off']).default('off'),
  TOOLGATE_RATE_LIMIT: z
    .string()
    .default('120/60s')
    .transform((text, ctx) => {
      try {
        return parseRateLimitSetting(text);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
});

export interface ServiceConfig {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  adminToken: string | undefined;
  schedulerToken: string | undefined;
  clientTokens: string[];
  /** `open` while no client token is set (the legacy behaviour, logged at start); else `authenticated`. */
  clientRoutes: ClientRoutes;
  /** While the client routes are open: host names the API answers to beside loopback names and IP addresses. */
  allowedHosts: string[];
  authservId: string | undefined;
  bodyLimit: string;
  /** `auto`: the demo only on a fresh embedded database, and where it was seeded before (src/app/demo/demo-mode.ts). */
  demo: DemoSetting;
  /** The migrations adopt the legacy application's tables where they exist (else such a table stops them). */
  adoptLegacyTables: boolean;
  /** A schema of toolgate's own for all its tables (src/db/schema.ts); none: the database's search_path. */
  schema: string | undefined;
  log: boolean;
  /** pretty or JSON lines; `auto`: pretty on a terminal only. */
  logFormat: LogFormat;
  rateLimit: ClientRateLimitOptions | false;
  trustProxy: TrustProxy;
  /** The longest one database query may take before the request is answered 503 (0: no limit). */
  dbQueryTimeoutMs: number;
  /** With embeddings, how often the re-embedding job looks for chunks to embed. */
  embeddingSweepMs: number;
  /** Bounds on one agent run, and the domain of its replies' Message-IDs. */
  agentRuns: AgentRunLimits & { messageIdDomain?: string };
  /** How long an approval request waits for its decision. */
  approvalExpiryMs: number;
  /** How long records are kept (TOOLGATE_RETENTION, default all) and how long a partition spans (TOOLGATE_PARTITIONS). */
  retention: RetentionSettings;
  /** On SIGTERM, how long the requests in flight are waited for before the service stops. */
  shutdownTimeoutMs: number;
  /** A token that may read GET /metrics (the admin token may too). */
  metricsToken: string | undefined;
  policyCache: PolicyCacheSettings;
  /** The MCP servers, as TOOLGATE_MCP_CONFIG's file holds them (`{"mcpServers": …}`); undefined without one. */
  mcp: unknown;
  /** What the spans carry (TOOLGATE_TRACE_ROUTING_KEY, TOOLGATE_TRACE_CONTENT); they are exported only when OTEL_EXPORTER_OTLP_* says where. */
  tracing: TracingSettings;
}

/** Express's "trust proxy" setting: off, a hop count, or a list of trusted proxy addresses. */
export type TrustProxy = false | number | string;

export function readConfig(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ToolgateConfigError('ERR_TOOLGATE_ENV', `The environment is not a valid toolgate configuration: ${problems}.`);
  }
  const e = parsed.data;
  const clientTokens = (e.TOOLGATE_CLIENT_TOKENS ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (clientTokens.length > 0 && e.TOOLGATE_ALLOWED_HOSTS.length > 0) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_ENV',
      'The environment is not a valid toolgate configuration: TOOLGATE_ALLOWED_HOSTS: it applies only while TOOLGATE_CLIENT_TOKENS is unset (the open client routes); drop one of them.',
    );
  }
  // The name the service listens on is one it is reached by; an address needs no listing.
  const listeningName = isHostName(e.HOST.toLowerCase()) && isIP(e.HOST) === 0 ? [e.HOST.toLowerCase()] : [];
  if (
    e.TOOLGATE_METRICS_TOKEN !== undefined &&
    [e.TOOLGATE_ADMIN_TOKEN, e.TOOLGATE_SCHEDULER_TOKEN, ...clientTokens].includes(e.TOOLGATE_METRICS_TOKEN)
  ) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_ENV',
      "The environment is not a valid toolgate configuration: TOOLGATE_METRICS_TOKEN: it is also another role's token; give the metrics reader its own.",
    );
  }
  const policyCache: PolicyCacheSettings = {
    mode: e.TOOLGATE_POLICY_CACHE,
    maxAgents: e.TOOLGATE_POLICY_CACHE_MAX_AGENTS,
    maxAgeMs: e.TOOLGATE_POLICY_CACHE_MAX_AGE_MS,
  };
  checkPolicyCacheOptions(policyCache);
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.TOOLGATE_DATA_DIR,
    adminToken: e.TOOLGATE_ADMIN_TOKEN,
    schedulerToken: e.TOOLGATE_SCHEDULER_TOKEN,
    clientTokens,
    clientRoutes: clientTokens.length > 0 ? 'authenticated' : 'open',
    allowedHosts: clientTokens.length > 0 ? [] : [...new Set([...listeningName, ...e.TOOLGATE_ALLOWED_HOSTS])],
    authservId: e.TOOLGATE_AUTHSERV_ID,
    bodyLimit: e.TOOLGATE_BODY_LIMIT,
    demo: e.TOOLGATE_DEMO,
    adoptLegacyTables: e.TOOLGATE_ADOPT_LEGACY_TABLES === 'on',
    schema: e.TOOLGATE_DB_SCHEMA,
    log: e.TOOLGATE_LOG === 'info',
    logFormat: e.TOOLGATE_LOG_FORMAT,
    rateLimit: e.TOOLGATE_RATE_LIMIT === false ? false : { ...e.TOOLGATE_RATE_LIMIT, store: e.TOOLGATE_RATE_LIMIT_STORE },
    trustProxy: e.TOOLGATE_TRUST_PROXY,
    dbQueryTimeoutMs: e.TOOLGATE_DB_QUERY_TIMEOUT_MS,
    embeddingSweepMs: e.TOOLGATE_EMBEDDING_SWEEP_S * 1000,
    agentRuns: {
      maxSteps: e.TOOLGATE_AGENT_MAX_STEPS,
      maxToolCalls: e.TOOLGATE_AGENT_MAX_TOOL_CALLS,
      historyChars: e.TOOLGATE_AGENT_HISTORY_CHARS,
      ...(e.TOOLGATE_MESSAGE_ID_DOMAIN ? { messageIdDomain: e.TOOLGATE_MESSAGE_ID_DOMAIN.toLowerCase() } : {}),
    },
    approvalExpiryMs: e.TOOLGATE_APPROVAL_EXPIRY_HOURS * HOUR_MS,
    retention: { keepDays: e.TOOLGATE_RETENTION, partitions: e.TOOLGATE_PARTITIONS },
    shutdownTimeoutMs: e.TOOLGATE_SHUTDOWN_TIMEOUT_MS,
    metricsToken: e.TOOLGATE_METRICS_TOKEN,
    policyCache,
    mcp: e.TOOLGATE_MCP_CONFIG === undefined ? undefined : readMcpConfigFile(e.TOOLGATE_MCP_CONFIG),
    tracing: { routingKey: e.TOOLGATE_TRACE_ROUTING_KEY, content: e.TOOLGATE_TRACE_CONTENT === 'on' },
  };
}

/** The file's JSON, whatever it holds: createToolgate checks it, with the sentence its shape calls for. */
function readMcpConfigFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_MCP_CONFIG',
      `TOOLGATE_MCP_CONFIG names ${JSON.stringify(file)}, which cannot be read (${(err as NodeJS.ErrnoException).code ?? 'unreadable'}): name an MCP configuration file.`,
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    // Not the parser's words: they quote the text, which may hold a value written in it.
    throw new ToolgateConfigError('ERR_TOOLGATE_MCP_CONFIG', `TOOLGATE_MCP_CONFIG names ${JSON.stringify(file)}, which is not JSON.`);
  }
}
