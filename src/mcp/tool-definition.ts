// A tool's definition as pinned (SEMANTICS §14): what a model and an operator read of it (its title,
// description, input schema and annotations), its digest, what changed between two, and the name
// and summary the manifest shows. Pure: the same listing always gives the same digest.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../core/canonical-json';
import { storableJson } from '../core/storable-text';

/** What a server lists of one tool, as far as toolgate reads it (tools/list's Tool). */
export const listedToolSchema = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.looseObject({ type: z.literal('object') }),
  annotations: z.looseObject({}).optional(),
});
export type ListedTool = z.infer<typeof listedToolSchema>;

export const DEFINITION_PARTS = ['title', 'description', 'input_schema', 'annotations'] as const;
export type DefinitionPart = (typeof DEFINITION_PARTS)[number];

/** The pinned definition. The title is pinned with the rest: a model reads it as the tool's name. */
export const pinnedDefinitionSchema = z.object({
  title: z.string().nullable(),
  description: z.string().nullable(),
  input_schema: z.record(z.string(), z.unknown()),
  annotations: z.record(z.string(), z.unknown()).nullable(),
});
export type PinnedDefinition = z.infer<typeof pinnedDefinitionSchema>;

/** What changed, part by part: each changed part with the pinned version and the listed one. */
export type DefinitionChanges = Partial<Record<DefinitionPart, { pinned: unknown; listed: unknown }>>;

/** The definition of a listed tool, as it is stored: text PostgreSQL cannot hold made storable first. */
export function definitionOf(tool: ListedTool): PinnedDefinition {
  return storableJson({
    title: tool.title ?? null,
    description: tool.description ?? null,
    input_schema: tool.inputSchema,
    annotations: tool.annotations ?? null,
  });
}

/** SHA-256 of the definition's canonical JSON (keys sorted), in hex. */
export function definitionDigest(definition: PinnedDefinition): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex');
}

export function definitionChanges(pinned: PinnedDefinition, listed: PinnedDefinition): DefinitionChanges {
  const changes: DefinitionChanges = {};
  for (const part of DEFINITION_PARTS) {
    if (canonicalJson(pinned[part]) !== canonicalJson(listed[part])) changes[part] = { pinned: pinned[part], listed: listed[part] };
  }
  return changes;
}

const MAX_DISPLAY_NAME = 80;
const MAX_SUMMARY = 200;

/** The manifest's display name and summary: the title (else the name) and the description's first line. */
export function manifestTextOf(name: string, server: string, definition: PinnedDefinition): { display_name: string; summary: string } {
  const annotated = definition.annotations?.title;
  const title = oneLine(definition.title ?? (typeof annotated === 'string' ? annotated : '')) || name;
  const firstLine = oneLine((definition.description ?? '').trim().split('\n', 1)[0] ?? '');
  return {
    display_name: cut(title, MAX_DISPLAY_NAME),
    summary: cut(firstLine || `${name}, a tool of the MCP server ${server}.`, MAX_SUMMARY),
  };
}

/** Whitespace of any kind (tabs, control characters) as single spaces, trimmed. */
function oneLine(text: string): string {
  return text
    .split(/[\s\p{Cc}]+/u)
    .filter(Boolean)
    .join(' ');
}

/** At most `max` UTF-16 units (what the manifest's schema counts), never half of a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const kept = text.slice(0, max - 1);
  const last = kept.charCodeAt(kept.length - 1);
  return `${last >= 0xd800 && last <= 0xdbff ? kept.slice(0, -1) : kept}…`;
}
