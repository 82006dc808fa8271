// The error registry: every error a caller can cause is one of these classes, each with a stable
// code from ERROR_CODES, which gives its status and meaning to the handlers, the OpenAPI document and
// docs/ERRORS.md; and every misconfiguration is a ToolgateConfigError with a code from
// CONFIG_ERROR_CODES. Middleware pass the HTTP errors to next(); one handler renders them.
// test/http/error-registry.test.ts fails when a code is used, listed or documented in one place only.

// A type only (what ParityMismatchError carries): erased when compiled, so this module still loads
// nothing and stays the ground every layer stands on.
import type { MigrationReport } from './legacy/report';

/**
 * Every code a response may carry, with its status and when it is given. The OpenAPI document
 * describes each route's errors with these sentences; docs/ERRORS.md says the same at more length.
 */
export const ERROR_CODES = {
  invalid_json: { status: 400, meaning: 'the body is not valid JSON' },
  bad_request: {
    status: 400,
    meaning: 'Express could not read the request (a malformed URL, say); the status is the 4xx Express reported',
  },
  unauthenticated: { status: 401, meaning: 'no token, a header that is not "Bearer <token>", or a token the service does not know' },
  forbidden: { status: 403, meaning: "the token's role may not call this route, or start this kind of run" },
  tool_forbidden: { status: 403, meaning: 'the tool is not offered to this run (a denied record is written); `tool` names it' },
  approval_required: {
    status: 403,
    meaning:
      'the tool needs approval for this sender, and this route runs it at once, so nothing was filed (a denied record is written); `tool` names it',
  },
  cap_exceeded: {
    status: 403,
    meaning: 'the call is over a cap of the attachment it runs under; nothing ran (a denied record is written); `tool` names it',
  },
  sender_forbidden: {
    status: 403,
    meaning: "the agent's access rules refuse this message's sender; nothing ran (a denied record is written)",
  },
  insecure_context: {
    status: 403,
    meaning: 'the dashboard was opened over plain HTTP from another machine, where the browser would drop its Secure cookie',
  },
  csrf: { status: 403, meaning: 'a dashboard form was not sent from a dashboard page that is still open' },
  not_found: { status: 404, meaning: 'no such agent, toolkit, attachment, rule or document' },
  no_candidate: {
    status: 404,
    meaning: 'the attachment carries no candidate terms to read, promote or drop (SEMANTICS §15); set them with PUT first',
  },
  conflict: { status: 409, meaning: 'a duplicate, or a change the system toolkits refuse' },
  parity_mismatch: {
    status: 409,
    meaning: 'the check found access that differs from the legacy strings; nothing was committed; `report` has it',
  },
  schema_not_migrated: { status: 409, meaning: 'the schema migrations have not run' },
  migration_busy: { status: 409, meaning: 'other writers held the tables for 30 s; nothing changed' },
  idempotency_key_in_flight: {
    status: 409,
    meaning: 'the first request with this Idempotency-Key is still running; nothing started again; see Retry-After',
  },
  message_id_in_flight: {
    status: 409,
    meaning: 'the first delivery of this message_id is still running; nothing started again; see Retry-After',
  },
  interrupted: {
    status: 409,
    meaning:
      'the first request with this Idempotency-Key was cut off when its instance stopped; what it ran is in the records, and nothing runs again',
  },
  cursor_expired: {
    status: 410,
    meaning: 'the `after` cursor of GET /decisions lies before the oldest entry the retention kept; nothing was read',
  },
  payload_too_large: { status: 413, meaning: 'the body is over the limit' },
  unsupported_media_type: {
    status: 415,
    meaning: 'the body is not JSON (sent with another Content-Type, or none; curl -d sends a form) or not UTF-8; nothing ran',
  },
  host_not_allowed: {
    status: 421,
    meaning:
      "the client routes are open, or a host's route checks its Host (tg.checkHost()), and the Host header is not localhost, an IP address or an allowed host name (a defence against DNS rebinding)",
  },
  validation_error: { status: 422, meaning: 'the path, query or body breaks the schema; `detail` lists {loc, msg, type}' },
  input_too_complex: {
    status: 422,
    meaning: 'a value is past a parsing bound (JSON depth, an address list, References, a sentence); `bound` names it; nothing ran',
  },
  invalid_cursor: {
    status: 422,
    meaning: 'the `after` cursor of GET /decisions is not one a read of the decision log gave; nothing was read',
  },
  idempotency_key_reused: { status: 422, meaning: 'this Idempotency-Key came with another body; nothing ran' },
  message_id_reused: {
    status: 422,
    meaning: "this message_id was handled for another sender or with other content (or is the agent's own reply's); nothing ran",
  },
  not_dispatchable: { status: 422, meaning: 'the tool is offered but nothing implements it' },
  rate_limited: { status: 429, meaning: 'the caller is over its budget; see Retry-After' },
  internal_error: { status: 500, meaning: "a fault of toolgate's own; nothing was granted" },
  answer_mismatch: {
    status: 500,
    meaning: "an answer broke its route's declared schema (checked under the tests, or with answers checked); it was not sent",
  },
  misconfigured: {
    status: 500,
    meaning:
      "a host mounted toolgate's middleware wrongly (toolRun() with no JSON body parser before it, say); the sentence says what to change",
  },
  upstream_error: { status: 502, meaning: 'the language model failed, timed out or broke the schema' },
  unavailable: { status: 503, meaning: 'the database cannot be reached; nothing was granted; see Retry-After' },
  tables_missing: {
    status: 503,
    meaning:
      "toolgate's tables are missing from its database (its migrations never ran there, or were undone); nothing was granted; an operator runs the migrations; see Retry-After",
  },
  authentication_unavailable: {
    status: 503,
    meaning: "the host's own authentication (roleOf) failed; nothing was granted; see Retry-After",
  },
  shutting_down: {
    status: 503,
    meaning: 'this instance is shutting down and takes no new requests; retry (another instance answers); see Retry-After',
  },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/**
 * What every caller error shares. Abstract, so that each error is a class of this file and its
 * status is its code's in ERROR_CODES: the two cannot drift apart.
 */
export abstract class HttpError extends Error {
  readonly status: number;
  /** The same as status, under the name http-errors and the handlers that follow it read. */
  readonly statusCode: number;
  /** Whether the message may be shown to the caller (http-errors' convention): true for a 4xx. */
  readonly expose: boolean;
  readonly code: ErrorCode;
  /** Extra fields rendered beside `detail` and `code` (e.g. `tool` on tool_forbidden). */
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(message);
    this.name = new.target.name;
    this.status = ERROR_CODES[code].status;
    this.statusCode = this.status;
    this.expose = this.status < 500;
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
    super('invalid_json', 'The request body is not valid JSON: send a JSON object with Content-Type: application/json.');
  }
}

export class UnauthenticatedError extends HttpError {
  constructor(message = 'This route needs a bearer token: send Authorization: Bearer <token>.') {
    super('unauthenticated', message, {}, { 'WWW-Authenticate': 'Bearer' });
  }
}

export class ForbiddenError extends HttpError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

/**
 * Why a tool is not offered to a run: a gate's refusal (SEMANTICS §5: a deny rule, an allow list
 * that does not name the sender, no routing key, a scheduled run it does not allow), the agent's
 * access rules, or no attachment carrying it. Spelled here, not imported from the core, so that
 * errors stay the ground every layer stands on; src/run/tool-run.ts holds the two lists together.
 */
export type NotOfferedReason =
  'deny_rule' | 'allow_list_default' | 'no_routing_key' | 'proactive_off' | 'access_rules' | 'not_carried' | 'tool_changed';

/**
 * A tool not offered to this run: why, when the run knows, and what an operator can change. The
 * routes ported from the legacy API say its sentence instead (`legacySentence`), which their
 * clients match on; it is untrue of an agent that holds the tool for other senders.
 */
export class ToolForbiddenError extends HttpError {
  readonly tool: string;
  readonly reason: NotOfferedReason | null;
  constructor(tool: string, reason: NotOfferedReason | null = null, options: { legacySentence?: boolean } = {}) {
    super('tool_forbidden', options.legacySentence ? `This agent does not have ${tool} tool enabled` : notOfferedSentence(tool, reason), {
      tool,
      // A held MCP tool says so in a field (SEMANTICS §14): a caller may wait for an operator, not change its sender.
      ...(reason === 'tool_changed' ? { reason } : {}),
    });
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
  deny_rule:
    'a deny rule of its gate matches this sender. Refused at dispatch, nothing ran; an operator can change who its attachment admits',
  allow_list_default:
    'its gate admits listed senders only, and this sender is none of them. Refused at dispatch, nothing ran; an operator can change who its attachment admits',
  no_routing_key:
    'this message has no sender address its gate could check. Refused at dispatch, nothing ran; a message needs a sender address its gate can match',
  proactive_off:
    'its attachment does not allow scheduled runs. Refused at dispatch, nothing ran; an operator can allow them on the attachment',
  access_rules:
    "the agent's access rules refuse this sender. Refused at dispatch, nothing ran; an operator can change the agent's access rules",
  not_carried: 'no toolkit attached to this agent carries it. Refused at dispatch, nothing ran; an operator can attach a toolkit that does',
  tool_changed:
    'its MCP server changed its definition since it was pinned, so it is held. Refused at dispatch, nothing ran; an operator can accept the new definition',
};

/**
 * A tool this run may only request (SEMANTICS §12), asked for where it would run at once (a route's
 * step, requireTool()): nothing ran and nothing was filed.
 */
export class ApprovalRequiredError extends HttpError {
  readonly tool: string;
  constructor(tool: string) {
    super(
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
    super(
      'cap_exceeded',
      `${detail}: refused at dispatch, nothing ran. It may run again once the window has room, or an operator can raise the cap.`,
      { tool },
    );
    this.tool = tool;
  }
}

/** The agent's access rules refuse this message's sender (SEMANTICS §9): nothing ran. */
export class SenderForbiddenError extends HttpError {
  constructor() {
    super(
      'sender_forbidden',
      "This agent's access rules refuse messages from this sender, so nothing was run. An operator can change the agent's access rules.",
    );
  }
}

export class NotFoundError extends HttpError {
  /** `change`: what to do about it, when it is not the path's id (a feature switched off). */
  constructor(what: string, change = 'check the id in the path') {
    super('not_found', `${what} was not found: ${change}.`);
  }
}

/** An attachment that exists but carries no candidate terms (SEMANTICS §15). */
export class NoCandidateError extends HttpError {
  constructor(attachmentId: number) {
    super(
      'no_candidate',
      `Attachment ${attachmentId} carries no candidate terms: set them with PUT .../candidate first (they may have been promoted or dropped).`,
    );
  }
}

export class ConflictError extends HttpError {
  constructor(message: string) {
    super('conflict', message);
  }
}

/**
 * A message_id the agent already knows, sent again by another sender, with other content, or as
 * the id of one of the agent's own replies (SEMANTICS §13): nothing ran, and nothing of the first
 * handling is shown.
 */
export class MessageIdReusedError extends HttpError {
  constructor() {
    super(
      'message_id_reused',
      "This message_id was already handled for another sender, or with other content (or is one of the agent's own replies): nothing was run. A new message needs a Message-ID of its own.",
    );
  }
}

/** An Idempotency-Key already used with another body (SEMANTICS §13): nothing ran. */
export class IdempotencyKeyReusedError extends HttpError {
  constructor() {
    super(
      'idempotency_key_reused',
      'This Idempotency-Key was already used with another request body: nothing was run. Send the same body to get its answer, or use a new key for a new request.',
    );
  }
}

/** The first request with this Idempotency-Key, or this message_id, is still running: retry later to get its answer. */
export class InFlightError extends HttpError {
  constructor(code: 'idempotency_key_in_flight' | 'message_id_in_flight', what: string) {
    super(
      code,
      `The first request with this ${what} is still running: nothing was started again. Retry shortly to get its answer.`,
      {},
      { 'Retry-After': '2' },
    );
  }
}

export class PayloadTooLargeError extends HttpError {
  constructor(limit: string) {
    super('payload_too_large', `The request body is over the limit of ${limit}: send a smaller body.`);
  }
}

export class ValidationError extends HttpError {
  readonly issues: ValidationIssue[];
  /**
   * Whether each `loc` starts at the part of the request that carried the value (`body`, `query`,
   * `path`), or, false, at the value a service was given: a service does not know where its input
   * came from, so the route that handed it on locates the issues (`at`).
   */
  readonly located: boolean;
  constructor(issues: ValidationIssue[], located = true) {
    super('validation_error', issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
    this.issues = issues;
    this.located = located;
  }
  override get detail(): unknown {
    return this.issues;
  }
  /** The same issues, each under the part of the request the value came in. */
  at(where: string): ValidationError {
    return new ValidationError(
      this.issues.map((issue) => ({ ...issue, loc: [where, ...issue.loc] })),
      true,
    );
  }
}

/**
 * Input past one of the bounds its parsers run within (SEMANTICS §12b): refused before anything
 * reads it. `bound` names the bound, `loc` where the value is; the sentence says what to change.
 */
export class InputTooComplexError extends HttpError {
  readonly bound: string;
  /** As ValidationError's: false when `loc` starts at the value a service was given. */
  readonly located: boolean;
  readonly #breach: { bound: string; detail: string; loc?: (string | number)[] };
  constructor(breach: { bound: string; detail: string; loc?: (string | number)[] }, located = true) {
    super('input_too_complex', breach.detail, { bound: breach.bound, ...(breach.loc !== undefined ? { loc: breach.loc } : {}) });
    this.bound = breach.bound;
    this.located = located;
    this.#breach = breach;
  }
  /** The same breach, its `loc` under the part of the request the value came in. */
  at(where: string): InputTooComplexError {
    return new InputTooComplexError({ ...this.#breach, loc: [where, ...(this.#breach.loc ?? [])] });
  }
}

/** A decision-log cursor that no read gave (SEMANTICS §16): refused, never taken for the start. */
export class InvalidCursorError extends HttpError {
  constructor() {
    super(
      'invalid_cursor',
      "The after cursor is not one a read of the decision log gave: pass the Toolgate-Cursor header (or a line's cursor) of an earlier read as it was, or leave after out to read from the start.",
      { loc: ['query', 'after'] },
    );
  }
}

/**
 * A decision-log cursor from before the retention's horizon (SEMANTICS §16): the entries after it
 * are gone, so a read from it would pass over them unsaid; refused with where the log starts now.
 */
export class CursorExpiredError extends HttpError {
  constructor(start: string) {
    super(
      'cursor_expired',
      'The decision log no longer holds every entry after this cursor: the retention (TOOLGATE_RETENTION) removed the oldest entries, some of which this reader had not read. Read on from `start`, the oldest entry kept (or leave after out, which reads from there too); the entries in between are gone.',
      { loc: ['query', 'after'], start },
    );
  }
}

/** A tool that is offered but has no implementation the generic dispatch route can run. */
export class NotDispatchableError extends HttpError {
  constructor(tool: string) {
    super(
      'not_dispatchable',
      `The tool ${tool} has no implementation in this toolgate to dispatch: give the host tool an execute function, or call the route that uses it.`,
      { tool },
    );
  }
}

export class UpstreamError extends HttpError {
  constructor(message: string) {
    super('upstream_error', message);
  }
}

/** The host's roleOf failed: nobody is let in on a guess, and the caller may retry. */
export class AuthenticationUnavailableError extends HttpError {
  constructor() {
    super(
      'authentication_unavailable',
      "Who is calling could not be established right now (the host's own authentication failed); nothing was granted. Retry shortly.",
      {},
      { 'Retry-After': '5' },
    );
  }
}

/**
 * A Host header that is none of the names an open route may be reached by (DNS rebinding): the
 * router's client routes while open, or a host's own route behind tg.checkHost().
 */
export class HostNotAllowedError extends HttpError {
  constructor(host: string, where: 'client routes' | 'host route' = 'client routes') {
    const shown = JSON.stringify(host.slice(0, 100));
    super(
      'host_not_allowed',
      where === 'client routes'
        ? `The Host ${shown} is not a name this service answers to while its client routes are open: use localhost or an IP address, or add the name to allowedHosts (the service: TOOLGATE_ALLOWED_HOSTS), or configure client tokens.`
        : `The Host ${shown} is not a name this route answers to: use localhost or an IP address, or add the name to checkHost({ allowedHosts }).`,
    );
  }
}

/** The database cannot be reached: the request is refused, never answered by granting anything. */
export class UnavailableError extends HttpError {
  constructor(options?: { cause?: unknown }) {
    super(
      'unavailable',
      'The service cannot reach its database right now; nothing was granted. Retry shortly.',
      {},
      { 'Retry-After': '5' },
    );
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/**
 * toolgate's tables are not in its database: the migrations never ran there, or an undo took them
 * away under a running service. Not a fault of the request nor of toolgate's code, and nothing to
 * grant from: a 503 that says what an operator does, never a 500.
 */
export class TablesMissingError extends HttpError {
  constructor(options?: { cause?: unknown }) {
    super(
      'tables_missing',
      "toolgate's tables are missing from its database: its schema migrations never ran there, or were undone. Nothing was granted. Run the migrations (npm run migrate, or tg.migrate() in a host), then retry.",
      {},
      { 'Retry-After': '30' },
    );
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** A caller over its budget on the client routes: the HTTP.md error shape, with when to retry. */
export class RateLimitedError extends HttpError {
  constructor(retryAfterSeconds: number) {
    super(
      'rate_limited',
      `Too many requests from this caller: retry in ${retryAfterSeconds} s, or spread the calls out.`,
      {},
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}

/** This instance is draining for a shutdown (SEMANTICS §13): a load balancer retries elsewhere. */
export class ShuttingDownError extends HttpError {
  constructor() {
    super(
      'shutting_down',
      'This instance is shutting down and takes no new requests: retry, and another instance answers.',
      {},
      { 'Retry-After': '1' },
    );
  }
}

/**
 * A body a JSON route cannot read: in a charset or encoding other than UTF-8, or not JSON at all
 * (`notJson`: the Content-Type it came with, if any). Without this the route saw no body, and
 * answered as if none was sent: a 422, or a run with no sender, refused and recorded.
 */
export class UnsupportedMediaTypeError extends HttpError {
  constructor(notJson?: { contentType: string | undefined }) {
    super(
      'unsupported_media_type',
      notJson === undefined
        ? 'The body must be UTF-8 JSON: send Content-Type: application/json; charset=utf-8.'
        : `The body came ${notJson.contentType === undefined ? 'with no Content-Type' : `as ${JSON.stringify(notJson.contentType.slice(0, 100))}`}, and this route reads JSON only, so nothing was read or run: send it as JSON with the header Content-Type: application/json (curl -d sends a form unless given -H 'content-type: application/json').`,
    );
  }
}

/**
 * The first request with this Idempotency-Key was cut off when its instance stopped: what it ran is
 * on record, and nothing runs again with the key (SEMANTICS §13).
 */
export class InterruptedError extends HttpError {
  constructor() {
    super(
      'interrupted',
      'The first request with this Idempotency-Key was interrupted: the instance handling it stopped before it answered. What it ran is in the records (tool calls, runs); nothing is run again with this key.',
    );
  }
}

/** A path no route of the service answers (NotFoundError is for an id that names no row). */
export class RouteNotFoundError extends HttpError {
  constructor(method: string, path: string) {
    super('not_found', `No route ${method} ${path}: the README lists the routes.`);
  }
}

/** A request Express itself could not read (a malformed URL, say), under the 4xx status Express gave it. */
export class BadRequestError extends HttpError {
  // The one code whose status is not fixed: Express's own is kept, so the caller learns what it said.
  override readonly status: number;
  override readonly statusCode: number;
  constructor(status: number) {
    super('bad_request', 'The request could not be read: check its URL, headers and body.');
    this.status = status;
    this.statusCode = status;
  }
}

/** A fault of toolgate's own: the caller learns only that nothing was granted, the log the rest. */
export class InternalError extends HttpError {
  constructor() {
    super('internal_error', 'Something went wrong on our side; nothing was granted. The request id identifies it in the logs.');
  }
}

/**
 * An answer its route's declared schema refuses: held back, so a test sees the drift between what a
 * route says it answers and what it sends. `detail` names the fields, for the test's message.
 */
export class AnswerMismatchError extends HttpError {
  constructor(route: string, issues: ValidationIssue[]) {
    super(
      'answer_mismatch',
      `${route} answered outside its declared schema: ${issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ')}`,
    );
  }
}

/**
 * A mounting mistake met on a request (toolRun() with no body parser before it, no run on the
 * request): loud, and the sentence says what the operator changes.
 */
export class MisconfiguredError extends HttpError {
  constructor(cause: ToolgateConfigError) {
    super('misconfigured', `The service is misconfigured: ${cause.message}`);
  }
}

// The dashboard's own refusals: it renders them as pages, with the same statuses as the API.

/** The dashboard opened over plain HTTP from another machine, where its Secure cookie could never be kept. */
export class InsecureDashboardError extends HttpError {
  constructor() {
    super(
      'insecure_context',
      'The dashboard signs you in with a Secure cookie, which browsers keep only over HTTPS or on this machine (localhost). Open it over HTTPS: behind a TLS proxy, set TOOLGATE_TRUST_PROXY so toolgate sees the original https.',
    );
  }
}

/** A dashboard form that failed its CSRF check, most often one sent from a page left open too long. */
export class CsrfError extends HttpError {
  constructor() {
    super(
      'csrf',
      'This form was not sent from a dashboard page that is still open (it may have expired). Go back, reload the page and send it again.',
    );
  }
}

/** A dashboard address that is no page. */
export class PageNotFoundError extends HttpError {
  constructor(url: string) {
    super('not_found', `There is no dashboard page at ${url}.`);
  }
}

/** A dashboard form sent after its session ended: the form is not acted on, and no Bearer challenge is made. */
export class SignedOutError extends HttpError {
  constructor() {
    super(
      'unauthenticated',
      'You are signed out (a session ends after two hours without activity). Sign in again, then send the form again.',
    );
  }
}

/** Too many wrong admin tokens from one address on the dashboard's sign-in form. */
export class TooManyWrongTokensError extends HttpError {
  constructor() {
    super('rate_limited', 'Too many wrong tokens from this address: wait fifteen minutes, then try again with the admin token.');
  }
}

/** A dashboard form field that is none of its choices: one sentence for the page, not the API's list of issues. */
export class InvalidFormFieldError extends HttpError {
  constructor(message: string) {
    super('validation_error', message);
  }
}

// Why an enabled_tools migration stopped. Nothing was committed when one is thrown; the CLI, the
// admin route and the dashboard show what was found.

/** The check inside the apply found an agent whose new access differs from its legacy access. */
export class ParityMismatchError extends HttpError {
  readonly report: MigrationReport;
  constructor(report: MigrationReport) {
    const first = report.verification.mismatches
      .slice(0, 3)
      .map((m) => `agent ${m.agent_id}${m.tool_id ? ` / ${m.tool_id}` : ''}: ${m.problem}`);
    super(
      'parity_mismatch',
      `The enabled_tools migration was rolled back, nothing changed: after applying it, ${report.verification.mismatches.length} check(s) found access that differs from the legacy strings (${first.join('; ')}). The report lists them.`,
      { report },
    );
    this.report = report;
  }
}

/** An apply or undo needs toolgate's tables; a dry run can preview a legacy database without them. */
export class SchemaNotMigratedError extends HttpError {
  constructor() {
    super(
      'schema_not_migrated',
      "toolgate's tables are missing: run the schema migrations first (npm run migrate runs them, then this migration).",
    );
  }
}

/** Another writer held the tables longer than the migration waits for them. */
export class MigrationBusyError extends HttpError {
  constructor(seconds: number) {
    super(
      'migration_busy',
      `The enabled_tools migration waited ${seconds} s for other writers to agents, toolkits or attachments and gave up, nothing changed: retry when they are done.`,
    );
  }
}

/**
 * Every configuration code, with what to change. Each is thrown as a ToolgateConfigError when the
 * plugin or a middleware is built (a few only on a request, rendered as 500 misconfigured), except
 * ERR_TOOLGATE_NOTIFY_UNDELIVERED, which the policy cache logs and works around.
 */
export const CONFIG_ERROR_CODES = {
  ERR_TOOLGATE_AGENT_PARAM:
    'toolRun({ agentParam }) is not a route parameter name: name the parameter that holds the agent id, such as "id".',
  ERR_TOOLGATE_AGENT_RUNS:
    'An agentRuns limit is outside its range, or messageIdDomain is not a host name: give a whole number within the range the message names, or a name such as mail.thescoop.com.',
  ERR_TOOLGATE_APPROVALS: 'approvals.expiryMs is outside its range: give whole milliseconds from a minute (60000) to 30 days.',
  ERR_TOOLGATE_AUTHSERV_ID:
    'createToolgate({ authservId }) or authenticatedSender() was given no usable authserv-id: give the one token your receiving mail server stamps on Authentication-Results, such as "mx.example.com".',
  ERR_TOOLGATE_AUTH_ORDER: 'requireRole() ran on a request authenticate() had not seen: mount authenticate() before it.',
  ERR_TOOLGATE_BODY_LIMIT: 'bodyLimit is not a size body-parser reads as written: give one such as "1mb", "512kb" or "100b".',
  ERR_TOOLGATE_CLIENT_AUTH:
    "clientRoutes, clientTokens, roleOf and allowedHosts do not make one choice of who calls the client routes: give 'open' or 'authenticated', a roleOf function, and allowedHosts (host names) only with 'open'.",
  ERR_TOOLGATE_CHECK_HOST:
    'tg.checkHost() was given something other than { allowedHosts: [host names] }: give names alone, such as shop.internal (no scheme, port or path).',
  ERR_TOOLGATE_DATABASE:
    'createToolgate() was not given a Sequelize on PostgreSQL: pass one from createSequelize(url), or your own with the dialect "postgres".',
  ERR_TOOLGATE_DB_SCHEMA:
    'The schema toolgate is to keep its tables in (createToolgate({ schema }), createSequelize(url, { schema }), TOOLGATE_DB_SCHEMA) is not a name it takes: give lowercase letters, digits and _, at most 47 characters, such as "toolgate" (not public, pg_* or information_schema).',
  ERR_TOOLGATE_DUPLICATE_TOOL: "Two tools share an id, or a host tool reuses a builtin tool's: give each tool an id of its own.",
  ERR_TOOLGATE_EMBEDDINGS:
    'OpenAIEmbeddings was given no model, dimensions outside 1 to 16000, or a batchSize outside 1 to 2048: give a model name, and whole numbers within those ranges.',
  ERR_TOOLGATE_ENV: "The service's environment is not a valid configuration: change the variable the message names.",
  ERR_TOOLGATE_HOST_TABLES:
    "tg.migrate() found tables of the names toolgate's migrations would create, which toolgate did not create (nothing was changed): adopt the legacy application's agents, tool_calls, documents or tasks with adoptLegacyTables: true, or give toolgate a schema of its own.",
  ERR_TOOLGATE_HOST_TOOL_BUILTIN: "A host tool says builtin: true, which only toolgate's own tools are: set builtin: false.",
  ERR_TOOLGATE_LEGACY_NAME:
    "A host tool's legacy_name is empty, too long or holds control characters: give the name the legacy enabled_tools strings use.",
  ERR_TOOLGATE_MCP_CONFIG:
    'The MCP configuration (the mcp option, or the file TOOLGATE_MCP_CONFIG names) is not {"mcpServers": {"<name>": {"command", "args", "env"} | {"url", "headers"}}} with snake_case names of at most 14 characters: correct the entry the message names.',
  ERR_TOOLGATE_MCP_ENV:
    'An MCP server refers to ${VAR} in its env, headers or url, and the environment does not set that variable: set it before toolgate starts (its value is read when the server is connected, and shown nowhere).',
  ERR_TOOLGATE_MCP_SESSIONS:
    'The mcpSessions option is not { ttlMs, url, pollMs } with ttlMs from a minute to a day, pollMs from 100 ms to a minute and url a path such as "/mcp" or an absolute http(s) URL: correct the setting the message names.',
  ERR_TOOLGATE_MODEL_ENV: 'The TOOLGATE_MODEL_* or TOOLGATE_EMBEDDING_* variables are not valid: change the one the message names.',
  ERR_TOOLGATE_MODEL_KEY:
    'TOOLGATE_MODEL_PROVIDER=openai has no API key: set TOOLGATE_MODEL_API_KEY (or OPENAI_API_KEY), or unset the provider to use the local model.',
  ERR_TOOLGATE_NOTIFY_UNDELIVERED:
    "The policy cache's listening connection is not told of changes (a pooler in transaction mode, or a proxy that drops notifications), so runs read through the database: give toolgate a direct connection, or use policyCache 'strict'.",
  ERR_TOOLGATE_NOT_A_TOOLGATE: 'internalsOf() was given something createToolgate() did not return: pass the toolgate itself.',
  ERR_TOOLGATE_NO_BODY_PARSER:
    'toolRun() met a JSON body no parser had read (answered 500 misconfigured): mount express.json() before toolRun().',
  ERR_TOOLGATE_NO_RUN:
    "A route read the request's run, but toolRun() was not mounted before it (answered 500 misconfigured): mount toolRun() first.",
  ERR_TOOLGATE_OPENAI_MISSING: 'OpenAIModel needs the openai package, which toolgate does not install: npm install openai@6.',
  ERR_TOOLGATE_OPTION_TYPE:
    'An option of createToolgate is not of the type it takes (senderCheck a function, logger an object with error(), model a LanguageModel, tools a list, a token a string): give the kind of value the message names.',
  ERR_TOOLGATE_POLICY_CACHE:
    "policyCache is not one of its modes, or a setting is unknown or out of range: give 'listen', 'strict' or 'off', alone or as { mode, maxAgents, maxAgeMs, heartbeatMs }.",
  ERR_TOOLGATE_RATE_LIMIT_LIMIT:
    "The rate limit's limit is not a whole number of at least 1: give a budget such as 120, or turn the limit off.",
  ERR_TOOLGATE_RATE_LIMIT_SETTING: 'A rate limit setting is not "<requests>/<window>": write one such as "120/60s" or "1000/1h", or "off".',
  ERR_TOOLGATE_RATE_LIMIT_STORE:
    'The rate limit\'s store names no store: give "postgres" (one budget across instances) or "memory" (this process only).',
  ERR_TOOLGATE_RATE_LIMIT_WINDOW:
    "The rate limit's windowMs is not whole milliseconds within its range: give one such as 60000, or turn the limit off.",
  ERR_TOOLGATE_RECOVERY:
    'A recovery timing is out of range, or staleAfterMs is under twice heartbeatMs: give whole milliseconds from 100 to 3600000, with staleAfterMs at least twice heartbeatMs.',
  ERR_TOOLGATE_RESERVED_TOOL_ID:
    "A tool, or a step of a host's code, uses the id that records refusals by an agent's access rules: give the tool another id, or name the tool the step runs.",
  ERR_TOOLGATE_RETENTION:
    'The retention (createToolgate({ retention }), TOOLGATE_RETENTION) is not a number of days such as "90d", "off", or { keep, partitions } with partitions "month" or "day": give one of those.',
  ERR_TOOLGATE_ROLE_OF:
    "roleOf answered something that is not a role (answered 500 misconfigured): answer 'client', 'admin', 'scheduler' or 'metrics', { role, caller }, or null for no one.",
  ERR_TOOLGATE_ROUTES:
    'createToolgate({ routes }) names a group that does not exist, or says neither true nor false: use the groups ROUTE_GROUPS lists, each true or false.',
  ERR_TOOLGATE_SENDER_CHECK:
    'createToolgate() was given both authservId and senderCheck, two answers to how a sender counts: give authservId alone (it is authenticatedSender(authservId)), or senderCheck alone.',
  ERR_TOOLGATE_SHARED_TOKEN: 'One token is given to two roles: give each role its own.',
  ERR_TOOLGATE_TOOL_DEFINITION:
    "A tool definition is invalid: give it a snake_case id, a display_name, a summary, a kind of 'gate' or 'enhancement' and a builtin flag.",
  ERR_TOOLGATE_TOOL_EXECUTE: 'A host tool has no execute function: give it one.',
  ERR_TOOLGATE_TOOL_INPUT:
    "A tool's input schema is not a zod object JSON Schema can describe: use plain z.object({ ... }) of named arguments.",
  ERR_TOOLGATE_TOOL_NOT_REGISTERED:
    "run.callTool() was given a tool value that is not the one registered under its id (answered 500 misconfigured): pass the defineTool() value given to createToolgate({ tools }), or the tool's id.",
  ERR_TOOLGATE_TOOL_TIMEOUT: "A host tool's timeoutMs is out of range: give whole milliseconds from 1 to 3600000 (an hour).",
  ERR_TOOLGATE_TRACING:
    "The tracing option is not { routingKey, content } with routingKey 'none', 'hashed' or 'plain' and content true or false, nor false: correct the setting the message names.",
  ERR_TOOLGATE_TRUST_PROXY:
    'The trust proxy setting is not one Express reads: give a hop count, addresses or subnets such as "loopback, 10.0.0.0/8", or "off".',
  ERR_TOOLGATE_UNKNOWN_OPTION:
    'createToolgate() was given an option it does not take, at the top level or inside agentRuns, approvals, recovery or rateLimit: correct the name (the message guesses the one meant) or drop it.',
  ERR_TOOLGATE_UNKNOWN_TOOL:
    'requireTool() names no registered tool: register the tool, or correct the id (the message guesses the one meant).',
  ERR_TOOLGATE_WEAK_TOKEN: 'A token is shorter than 16 characters: use a long random value (openssl rand -hex 32).',
} as const satisfies Record<`ERR_TOOLGATE_${string}`, string>;

export type ConfigErrorCode = keyof typeof CONFIG_ERROR_CODES;

/**
 * A misconfiguration found while constructing a middleware or the plugin: thrown at
 * construction (app.use time), never reported as a request error.
 */
export class ToolgateConfigError extends Error {
  readonly code: ConfigErrorCode;
  /** Where the code is explained, with what to change: `docs/ERRORS.md#err_toolgate_…`, also at the message's end. */
  readonly help: string;
  constructor(code: ConfigErrorCode, message: string) {
    const help = `docs/ERRORS.md#${code.toLowerCase()}`;
    super(`${message} (${code}: ${help})`);
    this.help = help;
    this.name = 'ToolgateConfigError';
    this.code = code;
  }
}
