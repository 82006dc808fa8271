// Every error a caller can cause is one of these classes: a status, a stable code, and a sentence
// that says what to change. Middleware pass them to next(); one handler renders them.
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class HttpError extends Error {
  readonly status: number;
  /** The same as status, under the name http-errors and the handlers that follow it read. */
  readonly statusCode: number;
  /** Whether the message may be shown to the caller (http-errors' convention): true for a 4xx. */
  readonly expose: boolean;
  readonly code: string;
  /** Extra fields rendered beside `detail` and `code` (e.g. `tool` on tool_forbidden). */
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.statusCode = status;
    this.expose = status < 500;
    this.code = code;
    this.extra = extra;
    this.headers = headers;
  }

  /** What the response's `detail` carries: the sentence, or a list for validation errors. */
  get detail(): unknown {
    return this.message;
  }
}

export class InvalidJsonError extends HttpError {
  constructor() {
    super(400, 'invalid_json', 'The request body is not valid JSON: send a JSON object with Content-Type: application/json.');
  }
}

export class UnauthenticatedError extends HttpError {
  constructor(message = 'This route needs a bearer token: send Authorization: Bearer <token>.') {
    super(401, 'unauthenticated', message, {}, { 'WWW-Authenticate': 'Bearer' });
  }
}

export class ForbiddenError extends HttpError {
  constructor(message: string) {
    super(403, 'forbidden', message);
  }
}

/**
 * Why a tool is not offered to a run: a gate's refusal (SEMANTICS §5: a deny rule, an allow list
 * that does not name the sender, no routing key, a scheduled run it does not allow), the agent's
 * access rules, or no attachment carrying it. Spelled here, not imported from the core, so that
 * errors stay the ground every layer stands on; src/run/tool-run.ts holds the two lists together.
 */
export type NotOfferedReason = 'deny_rule' | 'allow_list_default' | 'no_routing_key' | 'proactive_off' | 'access_rules' | 'not_carried';

/**
 * A tool not offered to this run: why, when the run knows, and what an operator can change. The
 * routes ported from the legacy API say its sentence instead (`legacySentence`), which their
 * clients match on; it is untrue of an agent that holds the tool for other senders.
 */
export class ToolForbiddenError extends HttpError {
  readonly tool: string;
  readonly reason: NotOfferedReason | null;
  constructor(tool: string, reason: NotOfferedReason | null = null, options: { legacySentence?: boolean } = {}) {
    super(403, 'tool_forbidden', options.legacySentence ? `This agent does not have ${tool} tool enabled` : notOfferedSentence(tool, reason), { tool });
    this.tool = tool;
    this.reason = reason;
  }
}

function notOfferedSentence(tool: string, reason: NotOfferedReason | null): string {
  const why = reason === null ? undefined : NOT_OFFERED_BECAUSE[reason];
  return why ? `${tool} is not offered to this run: ${why}.` : `${tool} is not offered to this run: refused at dispatch, nothing ran.`;
}

/** Each refusal's cause, then what an operator can change; a reason that admits has no entry. */
const NOT_OFFERED_BECAUSE: Record<NotOfferedReason, string> = {
  deny_rule: 'a deny rule of its gate matches this sender. Refused at dispatch, nothing ran; an operator can change who its attachment admits',
  allow_list_default: 'its gate admits listed senders only, and this sender is none of them. Refused at dispatch, nothing ran; an operator can change who its attachment admits',
  no_routing_key: 'this message has no sender address its gate could check. Refused at dispatch, nothing ran; a message needs a sender address its gate can match',
  proactive_off: 'its attachment does not allow scheduled runs. Refused at dispatch, nothing ran; an operator can allow them on the attachment',
  access_rules: "the agent's access rules refuse this sender. Refused at dispatch, nothing ran; an operator can change the agent's access rules",
  not_carried: 'no toolkit attached to this agent carries it. Refused at dispatch, nothing ran; an operator can attach a toolkit that does',
};

/**
 * A tool this run may only request (SEMANTICS §12), asked for where it would run at once (a route's
 * step, requireTool()): nothing ran and nothing was filed.
 */
export class ApprovalRequiredError extends HttpError {
  readonly tool: string;
  constructor(tool: string) {
    super(
      403,
      'approval_required',
      `The tool ${tool} needs an approver's approval for this sender, and this route runs it at once: nothing ran. Call it through POST /agents/{id}/tool-calls or an agent run, which file a request an approver can decide.`,
      { tool },
    );
    this.tool = tool;
  }
}

/** A call over one of its attachment's caps (SEMANTICS §13): refused at dispatch, recorded, nothing ran. */
export class CapExceededError extends HttpError {
  readonly tool: string;
  constructor(tool: string, detail: string) {
    super(403, 'cap_exceeded', `${detail}: refused at dispatch, nothing ran. It may run again once the window has room, or an operator can raise the cap.`, { tool });
    this.tool = tool;
  }
}

/** The agent's access rules refuse this message's sender (SEMANTICS §9): nothing ran. */
export class SenderForbiddenError extends HttpError {
  constructor() {
    super(403, 'sender_forbidden', "This agent's access rules refuse messages from this sender, so nothing was run. An operator can change the agent's access rules.");
  }
}

export class NotFoundError extends HttpError {
  constructor(what: string) {
    super(404, 'not_found', `${what} was not found: check the id in the path.`);
  }
}

export class ConflictError extends HttpError {
  constructor(message: string) {
    super(409, 'conflict', message);
  }
}

/**
 * A message_id the agent already knows, sent again by another sender, with other content, or as
 * the id of one of the agent's own replies (SEMANTICS §13): nothing ran, and nothing of the first
 * handling is shown.
 */
export class MessageIdReusedError extends HttpError {
  constructor() {
    super(422, 'message_id_reused', 'This message_id was already handled for another sender, or with other content (or is one of the agent\'s own replies): nothing was run. A new message needs a Message-ID of its own.');
  }
}

/** An Idempotency-Key already used with another body (SEMANTICS §13): nothing ran. */
export class IdempotencyKeyReusedError extends HttpError {
  constructor() {
    super(422, 'idempotency_key_reused', 'This Idempotency-Key was already used with another request body: nothing was run. Send the same body to get its answer, or use a new key for a new request.');
  }
}

/** The first request with this Idempotency-Key, or this message_id, is still running: retry later to get its answer. */
export class InFlightError extends HttpError {
  constructor(code: 'idempotency_key_in_flight' | 'message_id_in_flight', what: string) {
    super(409, code, `The first request with this ${what} is still running: nothing was started again. Retry shortly to get its answer.`, {}, { 'Retry-After': '2' });
  }
}

export class PayloadTooLargeError extends HttpError {
  constructor(limit: string) {
    super(413, 'payload_too_large', `The request body is over the limit of ${limit}: send a smaller body.`);
  }
}

export class ValidationError extends HttpError {
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[]) {
    super(422, 'validation_error', issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
    this.issues = issues;
  }
  override get detail(): unknown {
    return this.issues;
  }
}

/** A tool that is offered but has no implementation the generic dispatch route can run. */
export class NotDispatchableError extends HttpError {
  constructor(tool: string) {
    super(422, 'not_dispatchable', `The tool ${tool} has no implementation in this toolgate to dispatch: give the host tool an execute function, or call the route that uses it.`, { tool });
  }
}

export class UpstreamError extends HttpError {
  constructor(message: string) {
    super(502, 'upstream_error', message);
  }
}

/** The host's roleOf failed: nobody is let in on a guess, and the caller may retry. */
export class AuthenticationUnavailableError extends HttpError {
  constructor() {
    super(503, 'authentication_unavailable', 'Who is calling could not be established right now (the host\'s own authentication failed); nothing was granted. Retry shortly.', {}, { 'Retry-After': '5' });
  }
}

/** A Host header that is none of the names the open service may be reached by (DNS rebinding). */
export class HostNotAllowedError extends HttpError {
  constructor(host: string) {
    super(
      421,
      'host_not_allowed',
      `The Host ${JSON.stringify(host.slice(0, 100))} is not a name this service answers to while its client routes are open: use localhost or an IP address, or add the name to allowedHosts (the service: TOOLGATE_ALLOWED_HOSTS), or configure client tokens.`,
    );
  }
}

/** The database cannot be reached: the request is refused, never answered by granting anything. */
export class UnavailableError extends HttpError {
  constructor(options?: { cause?: unknown }) {
    super(503, 'unavailable', 'The service cannot reach its database right now; nothing was granted. Retry shortly.', {}, { 'Retry-After': '5' });
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/**
 * A misconfiguration found while constructing a middleware or the plugin: thrown at
 * construction (app.use time), never reported as a request error.
 */
export class ToolgateConfigError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'ToolgateConfigError';
    this.code = code;
  }
}
