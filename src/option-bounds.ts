// The defaults and bounds of createToolgate's options, each number declared here once: the options
// schema (toolgate-options.ts) and the checks it calls hold an option to them, and the service's
// environment reader (config.ts) reads the same, so a variable and its option cannot drift apart.
import { DEFAULT_LISTENER_OPTIONS } from './db/policy-listener';

export const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The bounds on one agent run (SEMANTICS §10, §11), the option `agentRuns` less its Message-ID domain. */
export interface AgentRunLimits {
  /** The most model steps (answers) one run may take. */
  maxSteps: number;
  /** The most tool calls one run may make, over all its steps. */
  maxToolCalls: number;
  /** The most characters of a thread's earlier messages, calls and replies the model reads. */
  historyChars: number;
}

/** What an option is when a host leaves it out. */
export const OPTION_DEFAULTS = {
  bodyLimit: '1mb',
  clientRoutes: 'authenticated',
  // listen: as fast as off is slow, and never stale (it reads through whenever the LISTEN does not hold).
  policyCache: { mode: 'listen', maxAgents: 10_000, maxAgeMs: 300_000, heartbeatMs: DEFAULT_LISTENER_OPTIONS.heartbeatMs },
  /** Where a rate limit counts callers: in the database, so every instance shares one budget. */
  rateLimitStore: 'postgres',
  agentRuns: { maxSteps: 8, maxToolCalls: 16, historyChars: 32_000 } satisfies AgentRunLimits,
  /** A Message-ID domain that names no one's mail server: a host sets its own. */
  messageIdDomain: 'toolgate.invalid',
  /** Three days: a weekend and a day, for a shop whose approver reads mail on weekdays. */
  approvalExpiryMs: 72 * HOUR_MS,
  /**
   * After a crash (SEMANTICS §13): the heartbeat, when a silent instance is dead, the sweeper's
   * interval, and the grace added to a tool's timeout before its `started` record is interrupted.
   */
  recovery: { heartbeatMs: 5_000, staleAfterMs: 30_000, sweepIntervalMs: 15_000, graceMs: 30_000 },
  /** A host tool's longest call. */
  toolTimeoutMs: 60_000,
  /**
   * MCP sessions (SEMANTICS §14): a quarter of an hour, an agent loop's working time on one message;
   * where the endpoint is, resolved against the origin a session was opened at; how often live
   * connections are checked for a changed listing, a close or an expiry.
   */
  mcpSessions: { ttlMs: 15 * 60_000, url: '/mcp', pollMs: 2_000 },
} as const;

/** [least, most] an option may be, whole numbers throughout. */
export const OPTION_BOUNDS = {
  /** A token's fewest characters: long enough that guessing it is hopeless. */
  tokenLength: 16,
  policyCache: {
    maxAgents: [1, 10_000_000],
    /** 0: no limit. */
    maxAgeMs: [0, DAY_MS],
    heartbeatMs: [100, 10 * 60_000],
  },
  rateLimit: { windowMs: [1_000, DAY_MS], limit: [1, Number.MAX_SAFE_INTEGER] },
  /** A retention keeps records at least a day, and at most a hundred years. */
  retentionDays: [1, 36_500],
  agentRuns: { maxSteps: [1, 100], maxToolCalls: [1, 1000], historyChars: [1_000, 1_000_000] } satisfies Record<
    keyof AgentRunLimits,
    readonly [number, number]
  >,
  /** From a minute to 30 days: long enough to reach someone, short enough that an old request is not approved by mistake. */
  approvalExpiryMs: [60_000, 30 * DAY_MS],
  /** Each timing from a tenth of a second (for tests) to an hour. */
  recoveryMs: [100, HOUR_MS],
  /** Up to an hour. */
  toolTimeoutMs: [1, HOUR_MS],
  /** A session from a minute to a day; the poll from a tenth of a second (for tests) to a minute. */
  mcpSessions: { ttlMs: [60_000, DAY_MS], pollMs: [100, 60_000] },
} as const;
