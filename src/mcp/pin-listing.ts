// What one listing of a server's tools does to its pinned tools (SEMANTICS §14), decided without
// reading or writing anything: a tool listed for the first time is pinned, active; one listed with
// its pinned definition is active; one listed with another definition is held, the new one pending
// (until an operator accepts it); one no longer listed is stale. A tool whose name cannot be an id,
// whose id another tool has, whose definition nests past the JSON depth bound (its digest and
// every comparison walk it, so a hostile server must not hand us one that stalls the process), or
// whose input schema cannot be checked is skipped, with the reason.
import { INPUT_BOUNDS } from '../core/input-bounds';
import { tooDeepAt } from '../core/json-depth';
import { mcpToolId } from './mcp-tool-id';
import { definitionDigest, definitionOf, listedToolSchema, type PinnedDefinition } from './tool-definition';

export const PIN_STATUSES = ['active', 'held', 'stale'] as const;
export type PinStatus = (typeof PIN_STATUSES)[number];

export interface PinnedTool {
  server: string;
  tool_name: string;
  tool_id: string;
  digest: string;
  definition: PinnedDefinition;
  pending_digest: string | null;
  pending_definition: PinnedDefinition | null;
  status: PinStatus;
}

export interface SkippedTool {
  name: string;
  reason: string;
}

export interface ListingPlan {
  /** The server's pinned tools after the listing: those it had, then the new ones, in listing order. */
  tools: PinnedTool[];
  /** The ones to write: new, or changed in any field. */
  changed: PinnedTool[];
  skipped: SkippedTool[];
}

/** Why an input schema cannot be checked, or null when a validator compiles from it. */
export type SchemaCheck = (schema: Record<string, unknown>) => string | null;

export function planListing(
  server: string,
  pinned: readonly PinnedTool[],
  listed: readonly unknown[],
  checkSchema: SchemaCheck,
): ListingPlan {
  const skipped: SkippedTool[] = [];
  const seen = new Map<string, { definition: PinnedDefinition; digest: string }>();
  for (const entry of listed) {
    const parsed = listedToolSchema.safeParse(entry);
    const name = nameOf(entry);
    if (!parsed.success) {
      skipped.push({ name, reason: 'its listing is not a tool with a name and an object input schema' });
    } else if (seen.has(name)) {
      skipped.push({ name, reason: 'the server lists it twice' });
    } else if (tooDeepAt(entry, INPUT_BOUNDS.json_depth) !== null) {
      skipped.push({ name, reason: `its definition nests deeper than ${INPUT_BOUNDS.json_depth} levels` });
    } else {
      const definition = definitionOf(parsed.data);
      seen.set(name, { definition, digest: definitionDigest(definition) });
    }
  }

  const byName = new Map(pinned.map((t) => [t.tool_name, t]));
  const next = pinned.map((t): PinnedTool => {
    const now = seen.get(t.tool_name);
    if (now === undefined) return { ...t, status: 'stale', pending_digest: null, pending_definition: null };
    if (now.digest === t.digest) return { ...t, status: 'active', pending_digest: null, pending_definition: null };
    return { ...t, status: 'held', pending_digest: now.digest, pending_definition: now.definition };
  });

  // New names, with the id each would take: an id already pinned, or wanted by two new names, is nobody's.
  const takenIds = new Set(pinned.map((t) => t.tool_id));
  const wanted = new Map<string, { name: string; id: string }[]>();
  for (const name of seen.keys()) {
    if (byName.has(name)) continue;
    const spelled = mcpToolId(server, name);
    if ('skipped' in spelled) {
      skipped.push({ name, reason: spelled.skipped });
      continue;
    }
    wanted.set(spelled.id, [...(wanted.get(spelled.id) ?? []), { name, id: spelled.id }]);
  }
  const added: PinnedTool[] = [];
  for (const [id, names] of wanted) {
    for (const { name } of names) {
      if (takenIds.has(id) || names.length > 1) {
        skipped.push({ name, reason: `its id ${id} is another of the server's tools' (names differing only in case or separators)` });
        continue;
      }
      const { definition, digest } = seen.get(name)!;
      const problem = checkSchema(definition.input_schema);
      if (problem !== null) {
        skipped.push({ name, reason: `its input schema cannot be checked: ${problem}` });
        continue;
      }
      added.push({
        server,
        tool_name: name,
        tool_id: id,
        digest,
        definition,
        pending_digest: null,
        pending_definition: null,
        status: 'active',
      });
    }
  }

  const changed = [...next.filter((t, i) => !samePin(t, pinned[i]!)), ...added];
  return { tools: [...next, ...added], changed, skipped };
}

function samePin(a: PinnedTool, b: PinnedTool): boolean {
  return a.status === b.status && a.digest === b.digest && a.pending_digest === b.pending_digest;
}

function nameOf(entry: unknown): string {
  const name = typeof entry === 'object' && entry !== null ? (entry as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name.slice(0, 100) : '(no name)';
}
