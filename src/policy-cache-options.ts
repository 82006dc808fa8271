// The policy cache's options, checked in one place (createToolgate's construction, or the service's
// start from TOOLGATE_POLICY_CACHE*), each bad value a ToolgateConfigError naming it and the fix.
import { DEFAULT_LISTENER_OPTIONS, type PolicyListenerOptions } from './db/policy-listener';
import { ToolgateConfigError } from './errors';
import { OPTION_BOUNDS, OPTION_DEFAULTS } from './option-bounds';

export const POLICY_CACHE_MODES = ['off', 'listen', 'strict'] as const;
export type PolicyCacheMode = (typeof POLICY_CACHE_MODES)[number];

export interface PolicyCacheSettings {
  /**
   * - `off`: every run reads its agent's policy (one query) and compiles it;
   * - `listen` (the default): compiled policies are cached per instance and dropped on PostgreSQL
   *   notifications, read through while the LISTEN does not hold (one extra connection per
   *   instance, opened by the first run, which never keeps the process alive);
   * - `strict`: cached, and checked against the agent's policy version with one indexed read per
   *   run, for connections where LISTEN cannot work (PgBouncer in transaction mode).
   */
  mode: PolicyCacheMode;
  /** The most agents held at once (least recently used go first). Default 10000. */
  maxAgents?: number;
  /** The longest an entry is served, notifications or not, in ms (0: no limit). Default 300000. */
  maxAgeMs?: number;
  /** The listening connection's heartbeat, in ms: a connection that stops answering counts as lost. Default 5000. */
  heartbeatMs?: number;
}

export interface PolicyCacheConfig {
  mode: PolicyCacheMode;
  maxAgents: number;
  maxAgeMs: number;
  listener: PolicyListenerOptions;
}

const DEFAULTS = OPTION_DEFAULTS.policyCache;
const BOUNDS = OPTION_BOUNDS.policyCache;

export function checkPolicyCacheOptions(given: PolicyCacheSettings | PolicyCacheMode | undefined): PolicyCacheConfig {
  const options = typeof given === 'string' ? { mode: given } : (given ?? { mode: DEFAULTS.mode });
  if (typeof options !== 'object' || options === null || !(POLICY_CACHE_MODES as readonly string[]).includes(String(options.mode))) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_POLICY_CACHE',
      `createToolgate({ policyCache }) takes a mode, ${POLICY_CACHE_MODES.map((m) => `"${m}"`).join(', ')}, alone or as { mode, maxAgents, maxAgeMs, heartbeatMs }; got ${JSON.stringify(given)}.`,
    );
  }
  const unknown = Object.keys(options).filter((k) => !['mode', 'maxAgents', 'maxAgeMs', 'heartbeatMs'].includes(k));
  if (unknown.length > 0) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_POLICY_CACHE',
      `createToolgate({ policyCache: { ${unknown.join(', ')} } }) names no option: the options are mode, maxAgents, maxAgeMs and heartbeatMs.`,
    );
  }
  const maxAgents = whole('maxAgents', options.maxAgents ?? DEFAULTS.maxAgents, BOUNDS.maxAgents, `agents (e.g. ${DEFAULTS.maxAgents})`);
  const maxAgeMs = whole(
    'maxAgeMs',
    options.maxAgeMs ?? DEFAULTS.maxAgeMs,
    BOUNDS.maxAgeMs,
    `milliseconds up to a day (e.g. ${DEFAULTS.maxAgeMs}), or 0 for no limit`,
  );
  const [leastBeat, mostBeat] = BOUNDS.heartbeatMs;
  const heartbeatMs = whole(
    'heartbeatMs',
    options.heartbeatMs ?? DEFAULTS.heartbeatMs,
    BOUNDS.heartbeatMs,
    `milliseconds from ${leastBeat} to ${mostBeat} (e.g. ${DEFAULTS.heartbeatMs})`,
  );
  return {
    mode: options.mode,
    maxAgents,
    maxAgeMs,
    listener: {
      ...DEFAULT_LISTENER_OPTIONS,
      heartbeatMs,
      heartbeatTimeoutMs: Math.min(DEFAULT_LISTENER_OPTIONS.heartbeatTimeoutMs, heartbeatMs),
    },
  };
}

function whole(name: string, value: unknown, [min, max]: readonly [number, number], hint: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_POLICY_CACHE',
      `createToolgate({ policyCache: { ${name}: ${JSON.stringify(value)} } }) is not valid: give whole ${hint}.`,
    );
  }
  return value;
}
