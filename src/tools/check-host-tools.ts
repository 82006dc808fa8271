// What a host's tools must hold before toolgate takes them (createToolgate's `tools` option, and a
// registry built by hand): an execute function, a timeoutMs in range, a legacy_name the records can store.
import { z } from 'zod';
import { ToolgateConfigError } from '../errors';
import { OPTION_BOUNDS } from '../option-bounds';

/** What the tool-call records' `tool_name` column holds. */
const MAX_LEGACY_NAME = 100;
const legacyNameSchema = z
  .string()
  .min(1)
  .max(MAX_LEGACY_NAME)
  .regex(/^[^\p{Cc}]+$/u);

/** The fields of a HostTool these checks read (tool-registry.ts declares the whole). */
interface ToolFields {
  id: string;
  execute: unknown;
  timeoutMs?: number;
  legacy_name?: string;
}

/** Throws a ToolgateConfigError naming the first tool that breaks one; the ids are the manifest's to check. */
export function checkHostTools<T extends ToolFields>(hostTools: readonly T[]): readonly T[] {
  const [minTimeout, maxTimeout] = OPTION_BOUNDS.toolTimeoutMs;
  for (const tool of hostTools) {
    if (typeof tool.execute !== 'function') {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_TOOL_EXECUTE',
        `The host tool ${JSON.stringify(tool.id)} has no execute function: give it one.`,
      );
    }
    if (tool.timeoutMs !== undefined && (!Number.isInteger(tool.timeoutMs) || tool.timeoutMs < minTimeout || tool.timeoutMs > maxTimeout)) {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_TOOL_TIMEOUT',
        `The host tool ${JSON.stringify(tool.id)} has the timeoutMs ${JSON.stringify(tool.timeoutMs)}: give a whole number of milliseconds from ${minTimeout} to ${maxTimeout} (an hour).`,
      );
    }
    if (tool.legacy_name !== undefined && !legacyNameSchema.safeParse(tool.legacy_name).success) {
      throw new ToolgateConfigError(
        'ERR_TOOLGATE_LEGACY_NAME',
        `The host tool ${JSON.stringify(tool.id)} has the legacy_name ${JSON.stringify(tool.legacy_name)}: a legacy name is 1 to ${MAX_LEGACY_NAME} characters with no control characters, as tool-call records store it.`,
      );
    }
  }
  return hostTools;
}
