// The request's current run: toolRun() resolves it once (agent from the route, sender from the
// message, or a scheduled run for the scheduler) and keeps it for the request
// (`res.locals.toolgate.run`), with the one dispatch path; currentRun() reads it back.
import type { NextFunction, Request, RequestHandler } from 'express';
import { ForbiddenError, ToolgateConfigError } from '../src/errors';
import { carriesBody, unreadNonJsonBody } from './json-body';
import { pathId } from '../src/http/parse';
import type { RunService } from '../src/run/run-service';
import type { DispatchRun, ToolRun } from '../src/run/tool-run';
import { requestState, stateOf, type ToolgateRequestState } from './request-state';
import { senderAsGiven, type SenderCheck } from './sender-check';

/**
 * What the request asks for: a sender run with this sender (maybe missing) and the message's
 * Authentication-Results values (SEMANTICS §7), or a scheduled run.
 */
export type RunRequest = { kind: 'sender'; sender: unknown; authentication_results?: unknown } | { kind: 'scheduled' };

export interface ToolRunOptions {
  /** The route parameter holding the agent id. Default `id`. */
  agentParam?: string;
  /** Reads the run from the request. Default: `scheduled: true` in the body, else `from`, else `sender`. */
  runOf?: (req: Request) => RunRequest;
  /** Default: the plugin's (its authservId's authentication, or its senderCheck; else taken as given). */
  senderCheck?: SenderCheck;
}

export function defaultRunOf(req: Request): RunRequest {
  return runOfBody(req.body);
}

function runOfBody(body: unknown): RunRequest {
  if (typeof body !== 'object' || body === null) return { kind: 'sender', sender: undefined };
  const fields = body as Record<string, unknown>;
  if (fields.scheduled === true) return { kind: 'scheduled' };
  return { kind: 'sender', sender: fields.from ?? fields.sender, authentication_results: fields.authentication_results };
}

export function toolRun(runs: Pick<RunService, 'start' | 'startCached'>, options: ToolRunOptions = {}): RequestHandler {
  const agentParam = options.agentParam ?? 'id';
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(agentParam)) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_AGENT_PARAM',
      `toolRun({ agentParam: ${JSON.stringify(agentParam)} }) is not a route parameter name: use a name like "id".`,
    );
  }
  const runOf = options.runOf ?? defaultRunOf;
  const senderCheck = options.senderCheck ?? senderAsGiven;

  // Not async: a cache hit resolves the run with no promise at all (RunService.startCached). A
  // throw here reaches Express's error handler as a rejection would. Each property of the request
  // is read once: on a request object every read is a lookup V8 cannot cache (request-state.ts).
  return function resolveToolRun(req, res, next) {
    let asked: RunRequest;
    if (runOf === defaultRunOf) {
      const body: unknown = req.body;
      if (body === undefined) checkBodyParsed(req);
      asked = runOfBody(body);
    } else {
      asked = runOf(req);
    }
    const agentId = pathId(req.params, agentParam);
    const state = requestState(res);
    const run = dispatchRunOf(req, state, asked, senderCheck);
    const cached = runs.startCached(agentId, run);
    if (cached) return admit(state, cached, next);
    return runs.start(agentId, run).then((started) => admit(state, started, next));
  };
}

function dispatchRunOf(req: Request, state: ToolgateRequestState, asked: RunRequest, senderCheck: SenderCheck): DispatchRun {
  const role = state.auth?.role;
  if (asked.kind === 'scheduled') {
    if (role !== 'scheduler' && role !== 'admin') {
      throw new ForbiddenError(
        'Only the scheduler or admin token may start a scheduled run: send the sender instead, or use the scheduler token.',
      );
    }
    return { kind: 'scheduled' };
  }
  // The scheduler's token starts scheduled runs only (HTTP.md): a sender run would reach
  // toolkits that never opted in to scheduled runs, under a role that is not rate-limited.
  if (role === 'scheduler') {
    throw new ForbiddenError(
      'The scheduler token starts scheduled runs only: send "scheduled": true, or use a client token for a message\'s sender.',
    );
  }
  return { kind: 'sender', routing_key: senderCheck(req, asked.sender, asked.authentication_results) };
}

/** Keeps the run for the request, unless the agent's access rules refuse its sender (SEMANTICS §9): then nothing else runs. */
function admit(state: ToolgateRequestState, run: ToolRun, next: NextFunction): Promise<void> | void {
  if (run.access?.admitted === false) return run.refuseSender().then(next, next);
  state.run = run;
  next();
}

/**
 * The sender is read from the JSON body. A body nobody parsed would otherwise be a run with no
 * sender: a quiet refusal of every gated tool, recorded. A JSON one is the host's mounting mistake;
 * another (curl -d's form) is the caller's, told to send JSON, with nothing run or recorded.
 */
function checkBodyParsed(req: Request): void {
  if (!carriesBody(req)) return;
  const notJson = unreadNonJsonBody(req);
  if (notJson) throw notJson;
  throw new ToolgateConfigError(
    'ERR_TOOLGATE_NO_BODY_PARSER',
    `toolRun() reads the sender from the JSON body, but ${req.method} ${req.path} reached it with the body unparsed: mount express.json() before toolRun().`,
  );
}

/** The run a route mounted behind toolRun() works under; a mounting mistake is loud, not a grant. */
export function currentRun(req: Request): ToolRun {
  return runIn(stateOf(req));
}

/** The run kept in a request's state (middleware that holds the response pass res.locals.toolgate). */
export function runIn(state: ToolgateRequestState | undefined): ToolRun {
  const run = state?.run;
  if (!run) {
    throw new ToolgateConfigError('ERR_TOOLGATE_NO_RUN', "This route reads the request's run, but toolRun() is not mounted before it.");
  }
  return run;
}
