// The legacy `enabled_tools` check, exactly (seed 002): split on commas, trim, exact membership;
// empty or null grants nothing. And its reading for migration: the valid ids an agent's string
// grants, and the tokens that granted nothing with the id each most likely meant.
import { closestToolId } from './closest-tool';

/** The legacy `agent_has_tool`, kept bug for bug: the migration's parity check compares to it. */
export function legacyHasTool(enabledTools: string | null | undefined, toolId: string): boolean {
  if (!enabledTools) return false;
  return enabledTools.split(',').map((t) => t.trim()).includes(toolId);
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
  for (const raw of (enabledTools ?? '').split(',')) {
    const token = raw.trim();
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

/** Toolkits made by the migration are named from their sorted id set, so the name says it all. */
export function legacyToolkitName(toolIds: readonly string[]): string {
  return `Legacy: ${[...toolIds].sort().join(', ')}`;
}
