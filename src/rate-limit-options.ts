// The client routes' rate limit as options, and in the text form of TOOLGATE_RATE_LIMIT: checked in
// one place, so a bad value fails where it is given (app.use() time, or the service's start).
import { ToolgateConfigError } from './errors';
import { OPTION_BOUNDS } from './option-bounds';

export interface ClientRateLimitOptions {
  /** The window the budget is counted over, in milliseconds (1 second to 1 day). */
  windowMs: number;
  /** Requests a caller may make in one window. */
  limit: number;
  /**
   * Where callers are counted. `postgres` (createToolgate's default): in the toolgate's database,
   * one budget per caller across every instance on it. `memory`: in this process only, so N
   * instances give a caller N budgets.
   */
  store?: RateLimitStoreKind;
}

export const RATE_LIMIT_STORES = ['postgres', 'memory'] as const;
export type RateLimitStoreKind = (typeof RATE_LIMIT_STORES)[number];

const [MIN_WINDOW_MS, MAX_WINDOW_MS] = OPTION_BOUNDS.rateLimit.windowMs;
const [MIN_LIMIT, MAX_LIMIT] = OPTION_BOUNDS.rateLimit.limit;
const SETTING = /^(\d{1,9})\s*\/\s*(\d{1,9})\s*(ms|s|m|h)$/i;
const UNIT_MS: ReadonlyMap<string, number> = new Map([
  ['ms', 1],
  ['s', 1_000],
  ['m', 60_000],
  ['h', 3_600_000],
]);

/**
 * Reads the setting's text form (`TOOLGATE_RATE_LIMIT`): "<requests>/<window>" with the window in
 * ms, s, m or h ("120/60s", "1000/1h"), or "off". Throws a ToolgateConfigError naming the value.
 */
export function parseRateLimitSetting(text: string): ClientRateLimitOptions | false {
  const value = text.trim();
  if (value.toLowerCase() === 'off') return false;
  const match = SETTING.exec(value);
  if (!match) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_RATE_LIMIT_SETTING',
      `The rate limit ${JSON.stringify(text)} is not "<requests>/<window>": write e.g. "120/60s" or "1000/1h", or "off".`,
    );
  }
  return checkRateLimitOptions({
    limit: Number(match[1]),
    windowMs: Number(match[2]) * (UNIT_MS.get(match[3].toLowerCase()) ?? Number.NaN),
  });
}

export function checkRateLimitOptions(options: unknown): ClientRateLimitOptions {
  const given = (options ?? {}) as Partial<Record<keyof ClientRateLimitOptions, unknown>>;
  const { windowMs, limit, store } = given;
  if (typeof windowMs !== 'number' || !Number.isInteger(windowMs) || windowMs < MIN_WINDOW_MS || windowMs > MAX_WINDOW_MS) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_RATE_LIMIT_WINDOW',
      `clientRateLimit({ windowMs: ${String(windowMs)} }) is not a window: give whole milliseconds from ${MIN_WINDOW_MS} to ${MAX_WINDOW_MS} (e.g. 60000), or pass false to turn the limit off.`,
    );
  }
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < MIN_LIMIT || limit > MAX_LIMIT) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_RATE_LIMIT_LIMIT',
      `clientRateLimit({ limit: ${String(limit)} }) is not a budget: give a whole number of requests of at least ${MIN_LIMIT} (e.g. 120), or pass false to turn the limit off.`,
    );
  }
  if (store !== undefined && !(RATE_LIMIT_STORES as readonly unknown[]).includes(store)) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_RATE_LIMIT_STORE',
      `clientRateLimit({ store: ${JSON.stringify(store)} }) names no store: use "postgres" (one budget per caller across instances) or "memory" (this process only).`,
    );
  }
  return store === undefined ? { windowMs, limit } : { windowMs, limit, store: store as RateLimitStoreKind };
}
