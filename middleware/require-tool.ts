// requireTool(id): a gate tool not offered to the run refuses the request (403 tool_forbidden,
// recorded as denied), and so does one the run may only request (403 approval_required): a route
// runs its tool at once, so there is no call to file. An enhancement tool never refuses: the route
// asks the run and degrades. The routes ported from the legacy API refuse with its sentence.
import type { RequestHandler } from 'express';
import { closestToolId } from '../src/core/closest-tool';
import type { ToolManifest } from '../src/core/tool-manifest';
import { ToolgateConfigError } from '../src/errors';
import type { DispatchDecision, DispatchOptions } from '../src/run/tool-run';
import { runIn } from './current-run';

/** `observe` is told of each grant here (metrics); a refusal is told by the run's refuse(). */
const GRANTED: DispatchDecision = Object.freeze({ outcome: 'granted', reason: 'offered' });

export interface RequireToolOptions {
  /** A route ported from the legacy API: a refusal says `This agent does not have <tool> tool enabled`, which its clients match on. */
  legacySentence?: boolean;
}

export function requireTool(
  manifest: ToolManifest,
  toolId: string,
  observe?: (decision: DispatchDecision) => void,
  options: RequireToolOptions = {},
): RequestHandler {
  const tool = manifest.get(toolId);
  if (!tool) {
    const guess = closestToolId(toolId, manifest.ids);
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_UNKNOWN_TOOL',
      `requireTool(${JSON.stringify(toolId)}) names no registered tool${guess ? `: did you mean ${JSON.stringify(guess)}?` : '.'}`,
    );
  }
  if (tool.kind === 'enhancement') {
    return function enhancementTool(_req, res, next) {
      runIn(res.locals.toolgate);
      next();
    };
  }
  const refusal: DispatchOptions = options.legacySentence ? { legacy_sentence: true } : {};
  // Not async: a grant passes on with no promise; only a refusal waits, for its record.
  return function gateTool(_req, res, next) {
    const run = runIn(res.locals.toolgate);
    if (!run.grants(toolId)) return run.refuse(toolId, refusal).then(next, next);
    observe?.(GRANTED);
    next();
  };
}
