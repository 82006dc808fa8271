// How a call came to dispatch, as its record keeps it (SEMANTICS §15): what a refusal or an
// approval does with the call depends on it, so a preview replays each call as it came.
import { z } from 'zod';

/**
 * - `call`: a model's, a client's or an MCP client's call (a tool needing approval is filed as a request);
 * - `step`: a route's own step that runs at once (a tool needing approval is refused);
 * - `optional`: a step left out when the run may not call its tool as usual (skipped);
 * - `approved`: the one execution of an approved request.
 */
export const dispatchModeSchema = z.enum(['call', 'step', 'optional', 'approved']);
export type DispatchMode = z.infer<typeof dispatchModeSchema>;
