// Starts runs: gets the agent's compiled policy (from the policy source: the cache or one query),
// resolves the run's tools once, and hands back the ToolRun through which every execution of that
// run must pass. The admin's explain view always reads the database.
import type { Span } from '@opentelemetry/api';
import type { Sequelize } from 'sequelize';
import type { ApprovalRequestView, Decider, NewApprovalRequest } from '../core/approval-request';
import { compilePolicy } from '../core/policy-index';
import { type CompiledPolicy } from '../core/compiled-policy';
import type { Instances } from '../db/instances';
import type { Resolution, Run } from '../core/types';
import { orUnavailable } from '../db/unavailable';
import { NotFoundError } from '../errors';
import { loadAgentPolicy, type LoadedPolicy, type RunAgent } from '../services/policy-loader';
import { capsRemaining } from '../services/cap-usage';
import { countShadowCaps } from '../services/shadow-caps';
import { completeToolCall, recordToolCall, startToolCall, type StartedBy, type ToolCallRecord } from '../services/tool-calls';
import type { ToolRegistry } from '../tools/tool-registry';
import type { CacheOutcome, CachedPolicy } from './policy-cache';
import { readThrough, type PolicyRead, type PolicySource } from './policy-source';
import type { ToolgateTracing } from '../tracing/toolgate-tracing';
import { ToolRun, type ClaimGrant, type DispatchDecision, type DispatchRun, type ToolRunDeps } from './tool-run';

/** What a RunService tells as it works (metrics); each must be cheap and must not throw. */
export interface RunObserver {
  /** A run that read the database to start (a miss, a bypass, strict mode's version check), timed. */
  gate?(seconds: number, cache: CacheOutcome): void;
  /** A run started from the cache alone, with nothing read: counted only (timing it costs more than the hit). */
  hit?(): void;
  decision?(decision: DispatchDecision): void;
  toolCall?(status: string): void;
  /** An approval request filed (a new one, not the same call's pending one). */
  approvalFiled?(): void;
}

type RecordFields = Omit<ToolCallRecord, 'status' | 'duration_ms' | 'error'>;

/** Where approval requests are kept (the approvals' store), and how long one waits for its decision. */
export interface RunApprovals {
  store: {
    file(request: NewApprovalRequest, record: RecordFields): Promise<{ request: ApprovalRequestView; created: boolean }>;
    claim(
      agentId: number,
      requestId: number,
      decider: Decider,
      record: RecordFields,
      by: StartedBy,
      grant: (policy: LoadedPolicy | null) => ClaimGrant,
    ): Promise<number | null | 'capped' | { not_granted: string }>;
  };
  expiryMs: number;
}

export interface RunServiceOptions {
  /** The Sequelize a tool's context carries: the host's, also when toolgate's own tables are on a pool of their own. */
  toolSequelize?: Sequelize;
  approvals: RunApprovals;
  /** This instance, which holds the `started` records it writes. */
  instances: Instances;
  /** Added to a tool's timeout before a dead instance's `started` record may be called interrupted. */
  graceMs: number;
  /** Told when an execution's outcome could not be written over its `started` record. */
  onRecordError?: ToolRunDeps['onRecordError'];
  /** Told of a fault of toolgate's own answered as what ran, after a tool ran (SEMANTICS §13). */
  onFault?: ToolRunDeps['onFault'];
  policies?: (read: PolicyRead) => PolicySource;
  observer?: RunObserver;
  /** Tools refused at dispatch whatever the policy grants (held MCP tools), read at each check. */
  withheld?: ReadonlySet<string>;
  /** Where each record's decision becomes an `execute_tool` span (SEMANTICS §16). */
  tracing?: ToolgateTracing;
}

export class RunService {
  readonly read: PolicyRead;
  /** Where runs get their compiled policies (the cache of the configured mode, or the database). */
  readonly policies: PolicySource;
  /** The `started` records this instance is running now: the sweeper leaves them be. */
  readonly inFlight = new Set<number>();
  private readonly deps: ToolRunDeps;
  private readonly observer: RunObserver;
  private readonly withheld: ReadonlySet<string> | undefined;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly registry: ToolRegistry,
    options: RunServiceOptions,
  ) {
    const { approvals, instances, observer = {}, onRecordError = () => undefined, onFault = () => undefined } = options;
    this.observer = observer;
    this.withheld = options.withheld;
    this.read = (agentId) => readPolicy(sequelize, registry, agentId);
    this.policies = options.policies ? options.policies(this.read) : readThrough(this.read);
    const told = observer.toolCall ?? (() => undefined);
    const { tracing } = options;
    // The spans of executions under way, by record id: only those an SDK records.
    const spans = new Map<number, Span>();
    const traceStarted = (record: RecordFields, id: number, input: unknown, startTime: number) => {
      const span = tracing?.started(record, id, input, startTime);
      if (span !== undefined) spans.set(id, span);
    };
    const startedBy = async (toolId: string): Promise<StartedBy> => {
      await instances.register();
      return { instance_id: instances.id, deadline_ms: registry.timeoutOf(toolId) + options.graceMs };
    };

    this.deps = {
      legacyName: (id) => this.registry.legacyName(id),
      implementation: (id) => this.registry.implementation(id),
      toolContext: { sequelize: options.toolSequelize ?? this.sequelize },
      record: async (record) => {
        const id = await orUnavailable(recordToolCall(this.sequelize, record));
        told(record.status);
        tracing?.recorded(record, id);
      },
      // A started record is counted by how it ends: one call, one count.
      start: async (record, caps, input) => {
        const startTime = tracing ? Date.now() : 0;
        const id = await orUnavailable(
          startToolCall(this.sequelize, record, await orUnavailable(startedBy(record.tool_id)), undefined, caps),
        );
        if (id !== null) {
          this.inFlight.add(id);
          if (tracing) traceStarted(record, id, input, startTime);
        }
        return id;
      },
      // Only an execution whose span records runs within it: with no SDK, or tracing off, the tool runs as it is.
      ...(tracing
        ? {
            within: <T>(id: number, work: () => T): T => {
              const span = spans.get(id);
              return span === undefined ? work() : tracing.within(span, work);
            },
            traceContext: (id: number) => {
              const span = spans.get(id);
              return span === undefined ? undefined : tracing.traceContext(span);
            },
          }
        : {}),
      countShadowCaps: (id, entries) => countShadowCaps(this.sequelize, id, entries),
      complete: async (id, outcome, output, kept) => {
        const span = spans.get(id);
        try {
          await completeToolCall(this.sequelize, id, outcome, kept);
        } finally {
          this.inFlight.delete(id);
          if (span !== undefined) {
            spans.delete(id);
            tracing?.ended(span, outcome.status, { output, error: outcome.error });
          }
        }
        told(outcome.status);
      },
      onRecordError,
      onFault,
      onDecision: observer.decision,
      fileApproval: async (request, record) => {
        const filed = await orUnavailable(approvals.store.file(request, record));
        if (filed.created) {
          told('pending_approval');
          observer.approvalFiled?.();
          tracing?.recorded({ ...record, status: 'pending_approval' }, null, filed.request.id);
        }
        return filed;
      },
      claimApproval: async (agentId, requestId, decider, record, grant) => {
        const startTime = tracing ? Date.now() : 0;
        const by = await orUnavailable(startedBy(record.tool_id));
        const id = await orUnavailable(
          approvals.store.claim(agentId, requestId, decider, record, by, (loaded) =>
            grant(loaded === null ? null : compilePolicy(loaded.policy, registry.manifest.ids, loaded.version)),
          ),
        );
        if (typeof id === 'number') {
          this.inFlight.add(id);
          if (tracing) traceStarted(record, id, undefined, startTime);
        }
        return id;
      },
      approvalExpiryMs: approvals.expiryMs,
      ...(options.withheld ? { withheld: options.withheld } : {}),
    };
  }

  /** How many agents' compiled policies this instance holds. */
  get cachedAgents(): number {
    return this.policies.size;
  }

  async policy(agentId: number): Promise<{ agent: RunAgent; compiled: CompiledPolicy; cache: CacheOutcome }> {
    const { policy, outcome } = await orUnavailable(this.policies.get(agentId));
    if (!policy) throw new NotFoundError(`Agent ${agentId}`);
    return { agent: policy.agent, compiled: policy.compiled, cache: outcome };
  }

  async start(agentId: number, run: DispatchRun): Promise<ToolRun> {
    const started = performance.now();
    const { agent, compiled, cache } = await this.policy(agentId);
    const toolRun = new ToolRun(agent, run, compiled, this.deps);
    this.observer.gate?.((performance.now() - started) / 1000, cache);
    return toolRun;
  }

  /**
   * The run, when the policy source can serve the agent's policy without reading (a cache hit in
   * listen mode); undefined when start() must read. A hit then costs no promise and no microtask:
   * on a warm gate they are most of what the gate adds to a host's route.
   */
  startCached(agentId: number, run: DispatchRun): ToolRun | undefined {
    const policy = this.policies.peek?.(agentId);
    if (policy === undefined) return undefined;
    this.observer.hit?.();
    return new ToolRun(policy.agent, run, policy.compiled, this.deps);
  }

  /**
   * A run resolved from the policy as it stands in the database now, never from a cache: what an
   * approval decides on (the approvers and the grant at decision time).
   */
  async startFresh(agentId: number, run: DispatchRun): Promise<ToolRun> {
    const policy = await orUnavailable(this.read(agentId));
    if (!policy) throw new NotFoundError(`Agent ${agentId}`);
    return new ToolRun(policy.agent, run, policy.compiled, this.deps);
  }

  /** The admin's view: which attachments admitted the run, why, and which members are stale. */
  async explain(agentId: number, run: Run): Promise<Resolution> {
    const policy = await orUnavailable(this.read(agentId));
    if (!policy) throw new NotFoundError(`Agent ${agentId}`);
    const resolution = heldOut(policy.compiled.resolve(run), this.withheld);
    // What each cap has left, for a run whose count is known: a sender's or a scheduled run's.
    if (run.kind === 'catalogue') return resolution;
    const scope = { agent_id: agentId, run: run.kind, routing_key: run.kind === 'sender' ? run.routing_key : null };
    for (const a of resolution.attachments) {
      if (a.caps.length === 0) continue;
      const left = await orUnavailable(capsRemaining(this.sequelize, a.attachment_id, a.caps, scope));
      a.caps = a.caps.map((cap, i) => ({ ...cap, remaining: left[i] ?? cap.limit }));
    }
    return resolution;
  }

  /** Opens the policy listener now (listen mode), so the cache is ready before the first run. */
  startListening(): void {
    this.policies.start?.();
  }

  close(): Promise<void> {
    return this.policies.close();
  }
}

/** The explained resolution as dispatch sees it: a held MCP tool is not offered, and is listed as held (SEMANTICS §14). */
function heldOut(resolution: Resolution, withheld: ReadonlySet<string> | undefined): Resolution {
  const held = withheld === undefined ? [] : resolution.tools.filter((id) => withheld.has(id));
  if (held.length === 0) return resolution;
  const offered = (ids: string[]) => ids.filter((id) => !withheld!.has(id));
  return {
    ...resolution,
    tools: offered(resolution.tools),
    needs_approval: offered(resolution.needs_approval),
    capped: offered(resolution.capped),
    held,
  };
}

async function readPolicy(sequelize: Sequelize, registry: ToolRegistry, agentId: number): Promise<CachedPolicy | null> {
  const loaded = await loadAgentPolicy(sequelize, agentId);
  if (!loaded) return null;
  // Shared by every run served from the cache: frozen, so no run can change what the next one reads.
  return {
    agent: Object.freeze(loaded.agent),
    compiled: compilePolicy(loaded.policy, registry.manifest.ids, loaded.version),
    version: loaded.version,
  };
}
