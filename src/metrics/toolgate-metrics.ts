// What a toolgate counts, in the Prometheus format (prom-client), on a registry of its own so that
// two toolgates in one process never collide. Every label value comes from a fixed set (outcomes,
// reasons, statuses, states): never a sender, a routing key, a token or any text of a message.
import { Counter, Gauge, Histogram, Registry, type LabelValues } from 'prom-client';
import type { Sequelize } from 'sequelize';
import type { ListenerState } from '../db/policy-listener';
import type { CacheOutcome } from '../run/policy-cache';
import type { DispatchDecision } from '../run/tool-run';
import type { InvalidationSource } from '../run/listened-policies';

const LISTENER_STATES: readonly ListenerState[] = ['idle', 'connecting', 'listening', 'lost', 'closed'];

/** What a host scrapes: the text exposition and its content type. */
export interface ToolgateMetricsView {
  readonly contentType: string;
  render(): Promise<string>;
}

/** What the MCP gauges read of each configured server: its name is the operator's, never a caller's text. */
export interface McpServerNumbers {
  name: string;
  status: 'connected' | 'unreachable';
  tools: number;
  held: number;
}

interface PoolNumbers {
  size?: number;
  available?: number;
  using?: number;
  waiting?: number;
}

export class ToolgateMetrics implements ToolgateMetricsView {
  readonly registry = new Registry();
  readonly #gate: Histogram<'cache'>;
  readonly #gateByCache: Map<CacheOutcome, ReturnType<Histogram<'cache'>['labels']>>;
  readonly #cache: Counter<'outcome'>;
  readonly #cacheByOutcome: Map<CacheOutcome, ReturnType<Counter<'outcome'>['labels']>>;
  readonly #decisions: Counter<'outcome' | 'reason'>;
  /** Decisions since the last scrape, by outcome then reason. */
  readonly #decided = new Map<DispatchDecision['outcome'], Map<string, number>>();
  readonly #invalidations: Counter<'source'>;
  readonly #toolCalls: Counter<'status'>;
  readonly #approvals: Counter<'outcome'>;
  readonly #listenerState: Gauge<'state'>;
  readonly #listenerLosses: Counter;
  #hits = 0;
  #cacheEntries: () => number = () => 0;
  #mcpServers: () => readonly McpServerNumbers[] = () => [];
  #mcpConnections: () => number = () => 0;

  constructor(sequelize: Sequelize) {
    const registers = [this.registry];
    this.#gate = new Histogram({
      name: 'toolgate_gate_duration_seconds',
      help: "Time to start a run that reads the database: a miss (load and compile), a bypass (read through), or strict mode's version check; a warm hit in listen mode reads nothing and is counted, not timed",
      labelNames: ['cache'],
      buckets: [0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1],
      registers,
    });
    this.#gateByCache = new Map((['hit', 'miss', 'bypass'] as const).map((c) => [c, this.#gate.labels(c)]));
    // The counts every warm request makes (a cache hit, a decision) are kept as plain numbers and
    // added to their counters when scraped: prom-client's own increment costs more than the hit.
    const flushHits = () => this.#flushHits();
    const flushDecisions = () => this.#flushDecisions();
    this.#cache = new Counter({
      name: 'toolgate_policy_cache_requests_total',
      help: 'Policy lookups by outcome: hit, miss (loaded and cached), bypass (read through: cache off or not trusted)',
      labelNames: ['outcome'],
      registers,
      collect: flushHits,
    });
    this.#cacheByOutcome = new Map((['hit', 'miss', 'bypass'] as const).map((c) => [c, this.#cache.labels(c)]));
    this.#decisions = new Counter({
      name: 'toolgate_decisions_total',
      help: 'Gate decisions at requireTool and dispatch, by outcome (granted, refused, skipped) and reason',
      labelNames: ['outcome', 'reason'],
      registers,
      collect: flushDecisions,
    });
    this.#invalidations = new Counter({
      name: 'toolgate_policy_cache_invalidations_total',
      help: 'Cache invalidations by source',
      labelNames: ['source'],
      registers,
    });
    this.#toolCalls = new Counter({
      name: 'toolgate_tool_calls_total',
      help: 'Tool calls by how they ended: success, failure (ran), denied, skipped (did not run)',
      labelNames: ['status'],
      registers,
    });
    this.#approvals = new Counter({
      name: 'toolgate_approval_requests_total',
      help: 'Approval requests by what happened to them: requested (filed), approved (ran once), denied, expired, void (their attachment was detached, its approvers changed, or it no longer grants)',
      labelNames: ['outcome'],
      registers,
    });
    this.#listenerState = new Gauge({
      name: 'toolgate_policy_listener_state',
      help: "The policy listener's state (1 for the current one); the cache is used only while listening",
      labelNames: ['state'],
      registers,
    });
    this.#listenerLosses = new Counter({
      name: 'toolgate_policy_listener_losses_total',
      help: 'Times the listening connection was lost or could not be opened',
      registers,
    });
    const entries = () => this.#cacheEntries();
    new Gauge({
      name: 'toolgate_policy_cache_entries',
      help: 'Agents whose compiled policy this instance holds',
      registers,
      collect() {
        this.set(entries());
      },
    });
    new Gauge({
      name: 'toolgate_db_pool_connections',
      help: 'The database pool: size, in use, available, and requests waiting for a connection',
      labelNames: ['state'],
      registers,
      collect() {
        const pool = poolNumbers(sequelize);
        for (const state of ['size', 'using', 'available', 'waiting'] as const) this.set({ state }, pool[state] ?? 0);
      },
    });
    const mcpServers = () => this.#mcpServers();
    new Gauge({
      name: 'toolgate_mcp_server_connected',
      help: 'Each configured MCP server: 1 while connected, 0 while unreachable (it is tried again, with backoff)',
      labelNames: ['server'],
      registers,
      collect() {
        this.reset();
        for (const server of mcpServers()) this.set({ server: server.name }, server.status === 'connected' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'toolgate_mcp_tools',
      help: "Each MCP server's pinned tools by status: active (offered where granted) or held (a changed definition awaits an operator)",
      labelNames: ['server', 'status'],
      registers,
      collect() {
        this.reset();
        for (const server of mcpServers()) {
          this.set({ server: server.name, status: 'active' }, server.tools);
          this.set({ server: server.name, status: 'held' }, server.held);
        }
      },
    });
    const connections = () => this.#mcpConnections();
    new Gauge({
      name: 'toolgate_mcp_session_connections',
      help: 'MCP clients connected to this instance on an MCP session',
      registers,
      collect() {
        this.set(connections());
      },
    });
    this.listener('idle');
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  gate(seconds: number, cache: CacheOutcome): void {
    this.#gateByCache.get(cache)?.observe(seconds);
    this.#cacheByOutcome.get(cache)?.inc();
  }

  /** A run started from the cache alone: counted, not timed. */
  hit(): void {
    this.#hits += 1;
  }

  decision(decision: DispatchDecision): void {
    let byReason = this.#decided.get(decision.outcome);
    if (!byReason) this.#decided.set(decision.outcome, (byReason = new Map()));
    byReason.set(decision.reason, (byReason.get(decision.reason) ?? 0) + 1);
  }

  invalidated(source: InvalidationSource): void {
    this.#invalidations.inc({ source });
  }

  toolCall(status: string): void {
    this.#toolCalls.inc({ status });
  }

  approvals(outcome: 'requested' | 'approved' | 'denied' | 'expired' | 'void', count = 1): void {
    this.#approvals.inc({ outcome }, count);
  }

  listener(state: ListenerState): void {
    for (const s of LISTENER_STATES) this.#listenerState.set({ state: s }, s === state ? 1 : 0);
    if (state === 'lost') this.#listenerLosses.inc();
  }

  #flushHits(): void {
    if (this.#hits === 0) return;
    this.#cacheByOutcome.get('hit')?.inc(this.#hits);
    this.#hits = 0;
  }

  #flushDecisions(): void {
    for (const [outcome, byReason] of this.#decided) {
      for (const [reason, count] of byReason) this.#decisions.inc({ outcome, reason } as LabelValues<'outcome' | 'reason'>, count);
    }
    this.#decided.clear();
  }

  /** Where the MCP gauges read from: the servers' states, and this instance's session connections. */
  countMcp(servers: () => readonly McpServerNumbers[], connections: () => number): void {
    this.#mcpServers = servers;
    this.#mcpConnections = connections;
  }

  /** Where the cache-size gauge reads from. */
  countEntries(count: () => number): void {
    this.#cacheEntries = count;
  }
}

function poolNumbers(sequelize: Sequelize): PoolNumbers {
  // sequelize-pool's counters (Sequelize does not type its connection manager's pool).
  const pool = (sequelize as unknown as { connectionManager?: { pool?: PoolNumbers & { write?: PoolNumbers } } }).connectionManager?.pool;
  if (!pool) return {};
  return typeof pool.size === 'number' ? pool : (pool.write ?? {});
}
