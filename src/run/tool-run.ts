// One run's resolution and the single dispatch path: the catalogue offered to the run and the
// check at execution read the same resolved set, computed once from the compiled policy, and no tool
// runs without its record. The explained resolution (which attachment admitted, why) is computed
// only when something reads it: the admin's view, or a refusal's record.
//
// A tool the run may only request (SEMANTICS §12) is offered, but a call of it does not run: it is
// filed as an approval request with the exact input it was validated with. That stored input runs
// later, once, through executeApproved(), on the requester's run resolved anew.
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { approverName, type ApprovalRequestView, type Decider, type NewApprovalRequest } from '../core/approval-request';
import { windowText } from '../core/cap-window';
import type { DispatchMode } from '../core/dispatch-mode';
import type { CapCandidate, CompiledPolicy, RunOffer } from '../core/compiled-policy';
import { ACCESS_RULES_RECORD_ID, refuseReservedToolId } from '../core/tool-manifest';
import type { CapRule, DispatchKind, GateDecision, GateReason, Resolution, Run } from '../core/types';
import {
  ApprovalRequiredError,
  CapExceededError,
  HttpError,
  NotDispatchableError,
  SenderForbiddenError,
  ToolForbiddenError,
  ToolgateConfigError,
  type NotOfferedReason,
} from '../errors';
import { parse, type Where } from '../http/parse';
import type { DenialReason } from '../../models/tool-call';
import type { CapClaim, CapScope } from '../services/cap-usage';
import type { HeldKey, KeptAnswer } from '../services/idempotency-keys';
import type { ShadowCapEntry } from '../services/shadow-caps';
import type { RunAgent } from '../services/policy-loader';
import type { ToolCallOutcome, ToolCallRecord } from '../services/tool-calls';
import type { InboundMessage } from '../llm/agent-step';
import type { ToolContext, ToolImplementation } from '../tools/tool-registry';
import type { CallShadow, RunShadow, Verdict } from '../core/shadow';
import { RunShadows } from './run-shadow';
import { withheldFrom } from '../core/withheld-offer';

export type DispatchRun = Extract<Run, { kind: DispatchKind }>;

type RecordFields = Omit<ToolCallRecord, 'status' | 'duration_ms' | 'error'>;

export interface ToolRunDeps {
  legacyName(toolId: string): string;
  /** What calls a tool (input schema and implementation), host or builtin, by id. */
  implementation(toolId: string): ToolImplementation | undefined;
  /** What a host tool's implementation is given besides its input. */
  toolContext: Pick<ToolContext, 'sequelize'>;
  /**
   * Counts a call the live terms let run (its `started` record's id) against the candidates' own
   * caps, and marks its record where they are full (SEMANTICS §15); absent, the shadow counts no caps.
   */
  countShadowCaps?(recordId: number, entries: readonly ShadowCapEntry[]): Promise<unknown>;
  /** Writes a record complete as it stands (`denied`, `skipped`). */
  record(record: ToolCallRecord): Promise<void>;
  /**
   * Writes the `started` record of an execution and returns its id; a failure here stops the tool.
   * With `caps`, the same statement counts the call: null when no candidate has room (nothing written).
   */
  start(record: RecordFields, caps: CapClaim | null, input?: unknown): Promise<number | null>;
  /**
   * Runs an execution (`work`) within its record `id`'s span when one is recorded (SEMANTICS §16),
   * so the tool's own outgoing calls are that span's children; absent, or with no span, `work` as it is.
   */
  within?<T>(id: number, work: () => T): T;
  /** The W3C trace context of record `id`'s span, for the tool's context; undefined when none is recorded. */
  traceContext?(id: number): Readonly<Record<string, string>> | undefined;
  /**
   * `output`: what a successful execution returned, for a trace that carries content (SEMANTICS
   * §16); `kept`: the answer of the request's Idempotency-Key, written in the same statement.
   */
  complete(id: number, outcome: ToolCallOutcome, output?: unknown, kept?: KeptAnswer & Pick<HeldKey, 'scope' | 'key'>): Promise<void>;
  /** Told when an execution's outcome could not be written over its `started` record. */
  onRecordError(err: unknown, context: { tool_id: string; record_id: number }): void;
  /**
   * Told of a fault of toolgate's own that is answered as what ran (200), not raised (SEMANTICS §13);
   * also of one working out a candidate's shadow (stage `shadow`), which changes nothing of the run.
   */
  onFault(err: unknown, context: { agent_id: number; stage: string }): void;
  /** Files a call as an approval request with its `pending_approval` record, or returns the same call's pending request. */
  fileApproval(request: NewApprovalRequest, record: RecordFields): Promise<{ request: ApprovalRequestView; created: boolean }>;
  /**
   * Approves a pending request and writes its execution's `started` record at once, in one
   * transaction that holds the agent's policy still and asks `grant` of it as it stands then (null:
   * no such agent): the record's id; null when it was no longer pending; `capped` when a cap has no
   * room (it stays pending); the reason when the policy no longer grants it. Nothing is written
   * unless all holds.
   */
  claimApproval(
    agentId: number,
    requestId: number,
    decider: Decider,
    record: RecordFields,
    grant: (policy: CompiledPolicy | null) => ClaimGrant,
  ): Promise<number | null | 'capped' | { not_granted: string }>;
  /** How long a request waits for its decision. */
  approvalExpiryMs: number;
  /** Told of every decision at dispatch (metrics); must not throw. */
  onDecision?(decision: DispatchDecision): void;
  /** Tools refused at dispatch whatever the policy grants, read at each check: held MCP tools (SEMANTICS §14). */
  withheld?: ReadonlySet<string>;
}

/** What the dispatch path decided for one tool, for metrics: never a sender, a key or any text. */
export interface DispatchDecision {
  outcome: 'granted' | 'refused' | 'skipped' | 'requested';
  /** `offered`; for a refusal or a skip, why the tool was not offered (a GateReason, `access_rules` or `not_carried`). */
  reason: string;
}

export interface DispatchOptions {
  /** The legacy name to record when it is not the tool's usual one (a pipeline stage). */
  tool_name?: string;
  /** A route ported from the legacy API: a refusal says the legacy sentence, which its clients match on. */
  legacy_sentence?: boolean;
  /** The call's input as validated, for a trace that carries content (SEMANTICS §16). */
  input?: unknown;
}

/** A refusal of a tool the run was not offered, as its denied record keeps it and a model's step reads it. */
export const NOT_OFFERED = 'Not offered to this run: refused at dispatch, nothing ran.';

/** What one execution gave: its output, or the error it threw (a result, not a fault of the service). */
export type ToolOutcome<T> = { status: 'success'; output: T } | { status: 'failure'; error: string; thrown: unknown };

/**
 * What a call gave: an execution's outcome, or the approval request it was filed as (new, or the
 * same call's pending one). `T` is the tool's output when the call named the tool by its value.
 */
export type CallOutcome<T = unknown> = ToolOutcome<T> | { status: 'pending_approval'; request: ApprovalRequestView; created: boolean };

/**
 * What one call came to, as its caller reads it back (a model's step, a route's answer, an MCP
 * result): what a call gave (CallOutcome), or why nothing ran: refused (recorded: not offered to
 * this run), over a cap (recorded), an input the tool's schema refuses, or a tool with no
 * implementation here (neither recorded). Each holds the error a route raises for it. Only
 * toolgate's own faults (the database) are thrown.
 */
export type CallStep<T = unknown> =
  | CallOutcome<T>
  | { status: 'refused'; error: HttpError }
  | { status: 'over_cap'; error: CapExceededError }
  | { status: 'invalid'; error: HttpError }
  | { status: 'not_dispatchable'; error: NotDispatchableError };

export interface CallOptions {
  /**
   * The tools the caller was shown, when fewer than the run's: any other is refused as not offered
   * (an MCP session never gains a tool its client was not shown when it opened).
   */
  among?: readonly string[];
  /** The message the run handles, for tools that read it. */
  message?: InboundMessage;
  /** Where the call was asked, for the approval request it may become. */
  origin?: CallOrigin;
  /**
   * Where the caller read the input, so that a 422 points at the field the client sent: the body
   * itself (the default: a host route whose body is the tool's input), or within it, as
   * POST /tool-calls reads it from `input` (`['body', 'input']`).
   */
  inputAt?: Where;
  /**
   * The request's Idempotency-Key and the answer an outcome gives it (POST /tool-calls): kept with
   * the outcome's record in one statement, then marked kept on the key.
   */
  keep?: { key: HeldKey; answerOf(outcome: ToolOutcome<unknown>): KeptAnswer };
}

/** Where a call was asked, for the approval request it may become. */
export interface CallOrigin {
  thread_id: number | null;
  run_id: number | null;
  message_id: string | null;
}

/** What an approval's claim found, re-checking the grant: the caps its call counts against, or why it no longer runs. */
export type ClaimGrant = { caps: CapClaim | null } | { not_granted: string };

/** Why an approved request did not run: it no longer grants (void it), another decision took it first, or a cap has no room (it stays pending). */
export type ApprovedOutcome =
  ToolOutcome<unknown> | { status: 'not_granted'; reason: string } | { status: 'taken' } | { status: 'capped'; error: CapExceededError };

export class ToolRun {
  /** The agent this run is for: its id, and its name and prompt for the model. */
  readonly agent: RunAgent;
  /** Who the run is for: a sender, by routing key, or no one (scheduled). Read through kind and routingKey. */
  private readonly dispatched: DispatchRun;
  /** The agent's access rules' decision on this run's sender; null for a scheduled run. */
  readonly access: GateDecision | null;
  private readonly policy: CompiledPolicy;
  /** The run's tools, resolved once: what is offered and what dispatch checks are this one offer. */
  private readonly offered: RunOffer;
  /** What the policy offers, before any tool is withheld: a withheld tool is refused as `tool_changed` only if offered here. */
  private readonly granted: RunOffer;
  private readonly deps: ToolRunDeps;
  /** The run under each attachment's candidate terms (SEMANTICS §15), for the records only; null when none has one. */
  private readonly shadows: RunShadows | null;
  private sortedTools: readonly string[] | undefined;
  private explained: Resolution | undefined;
  private key: string | undefined;

  constructor(agent: RunAgent, run: DispatchRun, policy: CompiledPolicy, deps: ToolRunDeps) {
    this.agent = agent;
    this.dispatched = run;
    this.policy = policy;
    this.granted = policy.offer(run);
    this.offered = deps.withheld ? withheldFrom(this.granted, deps.withheld) : this.granted;
    this.access = this.offered.access;
    this.deps = deps;
    this.shadows = policy.shadows.length === 0 ? null : new RunShadows(run, this.offered, policy.shadows, deps.withheld);
  }

  /**
   * What the attachments' candidate terms would change of this run's offer (SEMANTICS §15), for its
   * record; null when none would, or when working it out failed (told as a fault: the run is as it is).
   */
  get shadow(): RunShadow | null {
    if (this.shadows === null) return null;
    try {
      return this.shadows.runShadow();
    } catch (err) {
      this.deps.onFault(err, { agent_id: this.agentId, stage: 'shadow' });
      return null;
    }
  }

  /** The run's resolution explained (which attachments admitted it, why): computed on first read. */
  get resolution(): Resolution {
    return (this.explained ??= this.policy.resolve(this.dispatched));
  }

  /** A sender run (the message's sender passed the gates it passed) or a scheduled run (no sender). */
  get kind(): DispatchRun['kind'] {
    return this.dispatched.kind;
  }

  get agentId(): number {
    return this.agent.id;
  }

  get routingKey(): string | null {
    return this.dispatched.kind === 'sender' ? this.dispatched.routing_key : null;
  }

  /** The tool ids offered to this run, sorted: the catalogue a model would be shown. */
  get tools(): readonly string[] {
    return (this.sortedTools ??= Object.freeze(this.offered.list().sort()));
  }

  /** Whether the tool is offered to this run: as usual, or to request (needsApproval). */
  offers(toolId: string): boolean {
    return this.offered.has(toolId);
  }

  /** Whether the run may call the tool as usual: offered, and needing no approval. */
  grants(toolId: string): boolean {
    return this.offered.has(toolId) && this.offered.approvalFor(toolId) === null;
  }

  /** Whether a call of the tool is filed as an approval request instead of running. */
  needsApproval(toolId: string): boolean {
    return this.offered.approvalFor(toolId) !== null;
  }

  /** The offered tools this run may only request, sorted. */
  get toolsNeedingApproval(): readonly string[] {
    return this.offered.needingApproval().sort();
  }

  /** The run's key, made when first read: its tools' context carries it, and every record of the run keeps it (SEMANTICS §15). */
  get runKey(): string {
    return (this.key ??= randomUUID());
  }

  /** The compiled policy this run was resolved from: who approves what, as it stood then. */
  get compiled(): CompiledPolicy {
    return this.policy;
  }

  /**
   * Records the refusal of this run's sender by the agent's access rules (one `denied` record,
   * naming the rule or the default that refused) and returns the 403 to raise: nothing else runs.
   */
  async refuseSender(): Promise<SenderForbiddenError> {
    const access = this.access;
    const why =
      access === null
        ? 'access rules'
        : `${access.reason}${access.matched_rule ? ` (${access.matched_rule.kind} ${access.matched_rule.pattern})` : ''}`;
    await this.deps.record({
      ...this.fields(ACCESS_RULES_RECORD_ID, {}, 'step'),
      status: 'denied',
      reason: 'access_rules',
      duration_ms: 0,
      error: `refused by the agent's access rules: ${why}`,
    });
    this.decided('refused', 'access_rules');
    return new SenderForbiddenError();
  }

  /**
   * The one dispatch path. Checks `toolId` against this run's resolution (a tool that was not
   * offered is refused and recorded, even when named explicitly; one it may only request is refused
   * too, since code that runs at once cannot be filed), writes the `started` record, runs `execute`,
   * and completes the record. When the record cannot be written the tool does not run: the
   * database's error is thrown. A tool that throws is a `failure` outcome, not an exception.
   */
  async execute<T>(toolId: string, execute: (callId: number) => Promise<T> | T, options: DispatchOptions = {}): Promise<ToolOutcome<T>> {
    const outcome = await this.executeAs('step', toolId, execute, options);
    if (outcome.status === 'refused' || outcome.status === 'over_cap') throw outcome.error;
    return outcome;
  }

  private async executeAs<T>(
    mode: DispatchMode,
    toolId: string,
    execute: (callId: number) => Promise<T> | T,
    options: DispatchOptions,
    keep?: CallOptions['keep'],
  ): Promise<ToolOutcome<T> | Extract<CallStep, { status: 'refused' | 'over_cap' }>> {
    refuseReservedToolId(toolId);
    if (!this.grants(toolId)) return { status: 'refused', error: await this.refuseAs(mode, toolId, options) };
    // Counted with its `started` record, in one statement (SEMANTICS §13); an uncapped tool is not.
    const candidates = this.offered.capsFor(toolId);
    const id = await this.deps.start(
      { ...this.fields(toolId, options, mode), ...this.shadowOf(toolId, 'admitted') },
      candidates === null ? null : this.capClaim(toolId, candidates),
      options.input,
    );
    if (id === null) return { status: 'over_cap', error: await this.refuseCapped(toolId, candidates ?? [], options, mode) };
    await this.countShadowCaps(id, toolId);
    this.decided('granted', 'offered');
    return this.complete(toolId, id, execute, keep);
  }

  /**
   * The one door of a call, as a model harness, POST /tool-calls, an MCP session or a host route
   * makes it: refused and recorded when not offered; the input checked against the tool's schema
   * (nothing runs, nothing is written); then filed as an approval request when the run may only
   * request it, else the one dispatch path (its cap counted with its `started` record). Every way
   * it can end is a step the caller reads back; only toolgate's own faults are thrown.
   *
   * Given the host's own `defineTool()` value, the input is typed by its schema and the output by
   * what the tool returns; given an id, both are unknown.
   */
  call<S extends z.ZodType, R>(tool: ToolImplementation<S, R>, input: z.input<S>, options?: CallOptions): Promise<CallStep<Awaited<R>>>;
  call(toolId: string, input: unknown, options?: CallOptions): Promise<CallStep>;
  async call(named: string | ToolImplementation, input: unknown, options: CallOptions = {}): Promise<CallStep> {
    const toolId = typeof named === 'string' ? named : named.id;
    // Refused first when not offered, whatever the tool or its input is: the check never depends on them.
    if (!this.offers(toolId) || (options.among !== undefined && !options.among.includes(toolId))) {
      return { status: 'refused', error: await this.refuseAs('call', toolId, {}) };
    }
    const tool = this.deps.implementation(toolId);
    if (!tool) return { status: 'not_dispatchable', error: new NotDispatchableError(toolId) };
    // The types promised the value's output: another object under the same id would run code the
    // host's types know nothing of.
    if (typeof named !== 'string' && named !== tool) throw notRegistered(toolId);
    let checked: unknown;
    try {
      checked = parse(tool.input, input, options.inputAt ?? 'body');
    } catch (err) {
      if (err instanceof HttpError) return { status: 'invalid', error: err };
      throw err;
    }
    const attachmentId = this.offered.approvalFor(toolId);
    // Filed as asked, once it is known to validate: approval parses it once, when it runs, so a
    // schema that transforms its input transforms it once.
    if (attachmentId !== null) return this.fileApproval(toolId, input, attachmentId, options.origin);
    return this.executeAs(
      'call',
      toolId,
      (callId) => tool.execute(checked, this.contextFor(options.message, callId)),
      { input: checked },
      options.keep,
    );
  }

  /**
   * A call for code that handles its outcome and lets refusals be errors (a host route): as call(),
   * with a step that ran nothing thrown as its error (403, 429, 422, 501), for the error handler to
   * answer.
   */
  callTool<S extends z.ZodType, R>(
    tool: ToolImplementation<S, R>,
    input: z.input<S>,
    options?: CallOptions,
  ): Promise<CallOutcome<Awaited<R>>>;
  callTool(toolId: string, input: unknown, options?: CallOptions): Promise<CallOutcome>;
  async callTool(named: string | ToolImplementation, input: unknown, options: CallOptions = {}): Promise<CallOutcome> {
    const step = await this.call(named as string, input, options);
    if (step.status === 'success' || step.status === 'failure' || step.status === 'pending_approval') return step;
    throw step.error;
  }

  /**
   * Runs an approved request's stored input, once (SEMANTICS §12), on this run: the requester's,
   * resolved anew. Its attachment must still admit the requester and carry the tool, and the tool
   * must still take the input; then the request is claimed and the execution's record written in
   * one transaction that checks the grant once more on the policy as it stands then (SEMANTICS
   * §12a), so neither a second approval nor a revocation committed meanwhile lets it run. The record
   * names the approver.
   */
  async executeApproved(request: ApprovalRequestView, decider: Decider): Promise<ApprovedOutcome> {
    const grant = (policy: CompiledPolicy | null): ClaimGrant => {
      if (policy === null || !policy.grantsThrough(this.dispatched, request.attachment_id, request.tool)) {
        return { not_granted: 'its attachment no longer grants this tool to the requester' };
      }
      // An approved request counts against its own attachment's caps, on the requester's count, when it runs.
      const caps = policy.capsOf(request.attachment_id, request.tool);
      return { caps: caps.length === 0 ? null : this.capClaim(request.tool, [{ attachment_id: request.attachment_id, caps }]) };
    };
    const now = grant(this.policy);
    if ('not_granted' in now) return { status: 'not_granted', reason: now.not_granted };
    if (this.deps.withheld?.has(request.tool)) {
      return {
        status: 'not_granted',
        reason: "the tool's definition changed since it was asked, and it is held until an operator accepts it",
      };
    }
    const tool = this.deps.implementation(request.tool);
    if (!tool) return { status: 'not_granted', reason: 'the tool has no implementation to run' };
    // A call with no input is kept as null.
    let checked = tool.input.safeParse(request.input);
    if (!checked.success && request.input === null) checked = tool.input.safeParse(undefined);
    if (!checked.success) return { status: 'not_granted', reason: 'the tool no longer accepts the input it was asked with' };
    const id = await this.deps.claimApproval(this.agentId, request.id, decider, this.fields(request.tool, {}, 'approved'), grant);
    if (id === 'capped')
      return { status: 'capped', error: await this.refuseCapped(request.tool, now.caps?.candidates ?? [], {}, 'approved') };
    if (id === null) return { status: 'taken' };
    if (typeof id === 'object') return { status: 'not_granted', reason: id.not_granted };
    this.decided('granted', 'approved');
    const approval = { request_id: request.id, approved_by: approverName(decider) };
    return this.complete(request.tool, id, (callId) => tool.execute(checked.data, { ...this.contextFor(undefined, callId), approval }));
  }

  /** Runs `execute` under its `started` record `id`, then completes the record with how it ended. */
  private async complete<T>(
    toolId: string,
    id: number,
    execute: (callId: number) => Promise<T> | T,
    keep?: CallOptions['keep'],
  ): Promise<ToolOutcome<T>> {
    const started = performance.now();
    let outcome: ToolOutcome<T>;
    try {
      // Within its span, once, here: every execution of every kind (a route's step, a model's call,
      // an approved request) comes through this line.
      const output = this.deps.within === undefined ? await execute(id) : await this.deps.within(id, () => execute(id));
      outcome = { status: 'success', output };
    } catch (err) {
      outcome = { status: 'failure', error: errorText(err), thrown: err };
    }
    const error = outcome.status === 'failure' ? outcome.error : null;
    try {
      const output = outcome.status === 'success' ? outcome.output : undefined;
      const kept = keep?.answerOf(outcome);
      const keeping = keep === undefined || kept === undefined ? undefined : { scope: keep.key.scope, key: keep.key.key, ...kept };
      await this.deps.complete(id, { status: outcome.status, duration_ms: performance.now() - started, error }, output, keeping);
      if (keep !== undefined && kept !== undefined) keep.key.kept = kept;
    } catch (err) {
      // The tool has run: its outcome is the caller's, whatever became of the record, which stays
      // `started` and so says the end was never written.
      this.deps.onRecordError(err, { tool_id: toolId, record_id: id });
    }
    return outcome;
  }

  private async fileApproval(toolId: string, input: unknown, attachmentId: number, origin: CallOrigin | undefined): Promise<CallOutcome> {
    const filed = await this.deps.fileApproval(
      {
        agent_id: this.agentId,
        attachment_id: attachmentId,
        tool_id: toolId,
        input,
        run: this.kind,
        routing_key: this.routingKey,
        thread_id: origin?.thread_id ?? null,
        run_id: origin?.run_id ?? null,
        message_id: origin?.message_id ?? null,
        expires_in_ms: this.deps.approvalExpiryMs,
      },
      { ...this.fields(toolId, {}, 'call'), ...this.shadowOf(toolId, 'pending_approval') },
    );
    if (filed.created) this.decided('requested', 'needs_approval');
    return { status: 'pending_approval', ...filed };
  }

  private contextFor(message: InboundMessage | undefined, callId: number): ToolContext {
    const traceContext = this.deps.traceContext?.(callId);
    return {
      ...this.deps.toolContext,
      agent_id: this.agentId,
      agent: this.agent,
      run: this.kind,
      routing_key: this.routingKey,
      ...(message ? { message } : {}),
      // Made on the first call that needs it: most runs never call a tool by name.
      run_key: this.runKey,
      call_id: callId,
      ...(traceContext === undefined ? {} : { trace_context: traceContext }),
      callTool: async (id, nestedInput) => {
        const outcome = await this.callTool(id, nestedInput, message ? { message } : {});
        if (outcome.status === 'failure') throw outcome.thrown;
        if (outcome.status === 'pending_approval') throw new Error(`${id} awaits approval (request ${outcome.request.id}): it did not run`);
        return outcome.output;
      },
    };
  }

  /**
   * A fault of toolgate's own after a tool ran, which the caller is answered with (a 200 saying what
   * ran) instead of a 5xx that would invite a retry to run it again: logged, and put in words.
   */
  fault(err: unknown, stage: string): string {
    this.deps.onFault(err, { agent_id: this.agentId, stage });
    return err instanceof HttpError ? err.message : "an internal error of toolgate's own; nothing more ran, and toolgate's log has it.";
  }

  /** As execute(), for code that runs a tool as a step of its own: a tool that throws, throws. */
  async dispatch<T>(toolId: string, execute: (callId: number) => Promise<T> | T, options: DispatchOptions = {}): Promise<T> {
    const outcome = await this.execute(toolId, execute, options);
    if (outcome.status === 'failure') throw outcome.thrown;
    return outcome.output;
  }

  /**
   * Records a refusal and returns the error to raise: a gate tool's 403 goes through here too. A
   * tool the run may only request is refused where the caller runs it at once (a route's step).
   */
  refuse(toolId: string, options: DispatchOptions = {}): Promise<HttpError> {
    return this.refuseAs('step', toolId, options);
  }

  private async refuseAs(mode: DispatchMode, toolId: string, options: DispatchOptions): Promise<HttpError> {
    // Named by a caller or a model: refused as any tool the run was not offered, but with no record,
    // which would read as a sender refused by the agent's access rules (SEMANTICS §9).
    if (toolId === ACCESS_RULES_RECORD_ID) {
      this.decided('refused', 'not_carried');
      return new ToolForbiddenError(toolId);
    }
    const requestable = this.needsApproval(toolId);
    const why = this.whyNotOffered(toolId);
    await this.deps.record({
      ...this.fields(toolId, options, mode),
      status: 'denied',
      reason: denialReason(why),
      duration_ms: 0,
      error: requestable ? NEEDS_APPROVAL : NOT_OFFERED,
      // A requestable tool refused where it runs at once: the candidate agrees when it too needs approval.
      ...this.shadowOf(toolId, requestable ? 'pending_approval' : 'denied'),
    });
    this.decided('refused', why);
    if (requestable) return new ApprovalRequiredError(toolId);
    return new ToolForbiddenError(toolId, why === 'needs_approval' || why === 'offered' ? null : why, {
      legacySentence: options.legacy_sentence === true,
    });
  }

  /** Records a call refused because no attachment it may run through has room in its caps, and returns the 403. */
  private async refuseCapped(
    toolId: string,
    candidates: readonly CapCandidate[],
    options: DispatchOptions,
    mode: DispatchMode,
  ): Promise<CapExceededError> {
    const detail = `${toolId} is over its cap: ${candidates
      .flatMap((c) => c.caps)
      .map(capWords)
      .join('; ')}`;
    await this.deps.record({
      ...this.fields(toolId, options, mode),
      status: 'denied',
      reason: 'cap_exceeded',
      duration_ms: 0,
      error: `cap_exceeded: ${detail}`,
    });
    this.decided('refused', 'cap_exceeded');
    return new CapExceededError(toolId, detail);
  }

  private capClaim(toolId: string, candidates: readonly CapCandidate[]): CapClaim {
    return { candidates, tool_id: toolId, scope: this.capScope() };
  }

  private capScope(): CapScope {
    return { agent_id: this.agentId, run: this.kind, routing_key: this.routingKey };
  }

  /**
   * A call that is about to run, counted against the candidates' own caps (SEMANTICS §15). A
   * failure here leaves the record as it was written and is told as a fault: the call runs all the same.
   */
  private async countShadowCaps(recordId: number, toolId: string): Promise<void> {
    if (this.shadows === null || this.deps.countShadowCaps === undefined) return;
    try {
      const entries = this.shadows.capCount(toolId, this.capScope());
      if (entries !== null) await this.deps.countShadowCaps(recordId, entries);
    } catch (err) {
      this.deps.onFault(err, { agent_id: this.agentId, stage: 'shadow' });
    }
  }

  /** Records an enhancement step that was skipped because the run may not call its tool as usual. */
  async skip(toolId: string, options: DispatchOptions = {}): Promise<void> {
    refuseReservedToolId(toolId);
    await this.deps.record({
      ...this.fields(toolId, options, 'optional'),
      status: 'skipped',
      duration_ms: 0,
      error: this.needsApproval(toolId) ? NEEDS_APPROVAL : null,
      ...this.shadowOf(toolId, this.needsApproval(toolId) ? 'pending_approval' : 'denied'),
    });
    this.decided('skipped', this.whyNotOffered(toolId));
  }

  /** Why a tool is not granted, from the explained resolution: computed for refusals and skips only. */
  private whyNotOffered(toolId: string): NotOfferedReason | 'needs_approval' | 'offered' {
    if (this.deps.withheld?.has(toolId) && this.granted.has(toolId)) return 'tool_changed';
    if (this.needsApproval(toolId)) return 'needs_approval';
    if (this.offered.has(toolId)) return 'offered';
    const resolution = this.resolution;
    if (resolution.access?.admitted === false) return 'access_rules';
    const refused = resolution.attachments.find((a) => !a.admitted && a.tools.includes(toolId))?.reason;
    return refused !== undefined && isGateRefusal(refused) ? refused : 'not_carried';
  }

  /**
   * What the candidates would have made of a call the live terms decided as `live`, for its record:
   * nothing when no attachment has a candidate or each agrees. A failure here leaves the record
   * without it and is told as a fault: the live decision stands as made.
   */
  private shadowOf(toolId: string, live: Verdict): { shadow?: CallShadow } {
    if (this.shadows === null) return {};
    try {
      const shadow = this.shadows.callShadow(toolId, live);
      return shadow === null ? {} : { shadow };
    } catch (err) {
      this.deps.onFault(err, { agent_id: this.agentId, stage: 'shadow' });
      return {};
    }
  }

  private decided(outcome: DispatchDecision['outcome'], reason: string): void {
    this.deps.onDecision?.({ outcome, reason });
  }

  private fields(toolId: string, options: DispatchOptions, dispatch: DispatchMode): RecordFields {
    return {
      agent_id: this.agentId,
      tool_id: toolId,
      tool_name: options.tool_name ?? this.deps.legacyName(toolId),
      run: this.kind,
      routing_key: this.routingKey,
      dispatch,
      run_key: this.runKey,
      policy_version: this.policy.version,
    };
  }
}

/**
 * A refusal's stable reason, from why the tool was not granted: a gate's refusal and a tool no
 * attachment carries are both `not_offered` (the 403's sentence says which);
 * a tool offered elsewhere but not to this session's list is too.
 */
function denialReason(why: NotOfferedReason | 'needs_approval' | 'offered'): DenialReason {
  return why === 'access_rules' || why === 'tool_changed' || why === 'needs_approval' ? why : 'not_offered';
}

/** The gate's reasons that refuse; a gate that admits never leaves a tool unoffered. */
const GATE_REFUSALS = ['deny_rule', 'allow_list_default', 'no_routing_key', 'proactive_off'] as const satisfies readonly GateReason[] &
  readonly NotOfferedReason[];

function isGateRefusal(reason: GateReason): reason is (typeof GATE_REFUSALS)[number] {
  return (GATE_REFUSALS as readonly GateReason[]).includes(reason);
}

const NEEDS_APPROVAL = 'needs approval: this call runs at once, so it could not be filed as a request';

/** "at most 3 calls per sender per 1d". */
function capWords(cap: CapRule): string {
  return `at most ${cap.limit} ${cap.limit === 1 ? 'call' : 'calls'}${cap.tool_id === null ? ' of its toolkit' : ''} per ${cap.per} per ${windowText(cap.window_s)}`;
}

function notRegistered(toolId: string): ToolgateConfigError {
  return new ToolgateConfigError(
    'ERR_TOOLGATE_TOOL_NOT_REGISTERED',
    `run.callTool() was given a tool value for ${JSON.stringify(toolId)} that is not the one registered under that id: pass the defineTool() value given to createToolgate({ tools }), or its id.`,
  );
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
