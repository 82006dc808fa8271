// The legacy `enabled_tools` check, exactly (seed 002): split on commas, trim, exact membership;
// empty or null grants nothing. And its reading for migration: the valid ids an agent's string
// grants, and the tokens that granted nothing with the id each most likely meant.
import { closestToolId } from './closest-tool';

// Python's str.strip() with no argument, which the legacy check calls: its whitespace is not
// JavaScript's. It strips U+001C..U+001F and U+0085, which String#trim keeps, and keeps U+FEFF
// (a byte-order mark left by a CSV import), which String#trim strips. Either difference would
// grant or refuse a tool the legacy application did not.
const PY_SPACE = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, 'g');

/** The string's tokens as the legacy check sees them: split on commas, each Python-stripped. */
export function legacyTokens(enabledTools: string | null | undefined): string[] {
  if (!enabledTools) return [];
  return enabledTools.split(',').map((t) => t.replace(PY_STRIP, ''));
}

/** The legacy `agent_has_tool`, kept bug for bug: the migration's parity check compares to it. */
export function legacyHasTool(enabledTools: string | null | undefined, toolId: string): boolean {
  return legacyTokens(enabledTools).includes(toolId);
}

export interface UnmatchedToken {
  token: string;
  /** The registered id the token most likely meant, or null when nothing is close. */
  suggestion: string | null;
}

export interface LegacyReading {
  /** Registered ids the string grants under the legacy check, sorted, without duplicates. */
  tool_ids: string[];
  /** Non-empty tokens that are not exact registered ids, in order, without duplicates. */
  unmatched: UnmatchedToken[];
}

export function readEnabledTools(enabledTools: string | null | undefined, registeredIds: ReadonlySet<string>): LegacyReading {
  const granted = new Set<string>();
  const unmatched = new Map<string, UnmatchedToken>();
  for (const token of legacyTokens(enabledTools)) {
    if (token === '') continue;
    if (registeredIds.has(token)) granted.add(token);
    else if (!unmatched.has(token)) unmatched.set(token, { token, suggestion: closestToolId(token, registeredIds) });
  }
  return { tool_ids: [...granted].sort(), unmatched: [...unmatched.values()] };
}

/** The ids granted when the admin asks for mistyped tokens to be mapped to their suggestion. */
export function mappedToolIds(reading: LegacyReading): string[] {
  const ids = new Set(reading.tool_ids);
  for (const u of reading.unmatched) if (u.suggestion) ids.add(u.suggestion);
  return [...ids].sort();
}

/** The key a legacy toolkit is stored under (`toolkits.legacy_tool_set`): the sorted ids, comma-joined. */
export function legacyToolSetKey(toolIds: readonly string[]): string {
  return [...new Set(toolIds)].sort().join(',');
}

/** Toolkit names are at most this long (the column's width): the migration's names and the API's. */
export const TOOLKIT_NAME_MAX = 200;

/**
 * Toolkits made by the migration are named from their sorted id set, so the name says it all.
 * `attempt` 2, 3, … gives "… (2)", "… (3)": the names to try when an operator's toolkit already
 * holds the plain one. A set too long for the column is cut at an id and says how many are left out
 * (the toolkit's members and description keep the whole set).
 */
export function legacyToolkitName(toolIds: readonly string[], attempt = 1): string {
  const ids = [...new Set(toolIds)].sort();
  const suffix = attempt > 1 ? ` (${attempt})` : '';
  const full = `Legacy: ${ids.join(', ')}`;
  if (full.length + suffix.length <= TOOLKIT_NAME_MAX) return full + suffix;
  for (let kept = ids.length - 1; kept >= 0; kept--) {
    const name = `Legacy: ${ids.slice(0, kept).join(', ')}${kept > 0 ? ', ' : ''}… (+${ids.length - kept} more)`;
    if (name.length + suffix.length <= TOOLKIT_NAME_MAX) return name + suffix;
  }
  return `Legacy: ${ids.length} tools${suffix}`;
}
