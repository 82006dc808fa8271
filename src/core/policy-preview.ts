// A preview of a policy change (SEMANTICS §15), as plain functions over plain data: the recorded
// runs and calls of a window replayed against the policy as it stands and as the change would make
// it, each compiled once. Each distinct run (an agent and a sender, or an agent's scheduled runs)
// is resolved once per policy and shared by all its calls, and each of its tools decided once per
// way of coming to dispatch. A call that reaches no cap under either policy cannot depend on time
// order, so such calls may be given counted together (addCallGroup); the calls of a run group's
// tool that some cap counts are replayed in time order, so that caps count them as dispatch would. Only what the change alters is reported: a call
// whose outcome differs between the two replays, a run whose tools differ.
import { z } from 'zod';
import type { CompiledPolicy, RunOffer } from './compiled-policy';
import type { DispatchMode } from './dispatch-mode';
import { ACCESS_RULES_RECORD_ID } from './tool-manifest';
import type { CapRule, DispatchKind, Run } from './types';
import { withheldFrom } from './withheld-offer';

/** A tool-call record as a preview reads it. `at` is in milliseconds since the epoch. */
export interface RecordedCall {
  id: number;
  agent_id: number;
  tool_id: string;
  status: string;
  run: DispatchKind;
  routing_key: string | null;
  at: number;
  /** How the call came to dispatch; null on records written before it was kept: not replayed. */
  dispatch: DispatchMode | null;
  run_key: string | null;
}

/** The calls of one run group with one tool, come to dispatch one way, counted together. */
export interface RecordedCallGroup {
  agent_id: number;
  run: DispatchKind;
  routing_key: string | null;
  tool_id: string;
  dispatch: DispatchMode | null;
  calls: number;
}

/** The runs of one run group (an agent and a routing key, or an agent's scheduled runs), counted. */
export interface RecordedRunGroup {
  agent_id: number;
  run: DispatchKind;
  routing_key: string | null;
  runs: number;
}

/** An agent run's record as a preview reads it. */
export interface RecordedRun {
  id: number;
  agent_id: number;
  run: DispatchKind;
  routing_key: string | null;
  at: number;
  run_key: string | null;
}

/** Why a replayed call would end as it would: it runs (`offered`), or why not. */
const verdictReasonSchema = z.enum(['offered', 'access_rules', 'not_offered', 'needs_approval', 'cap_exceeded']);
export type VerdictReason = z.output<typeof verdictReasonSchema>;

const verdictStatusSchema = z.enum(['started', 'denied', 'skipped', 'pending_approval']);

/** What dispatch would record for a call: a record status, and why. `started`: the call would run. */
export interface Verdict {
  status: z.output<typeof verdictStatusSchema>;
  reason: VerdictReason;
}

const changedCallSchema = z.object({
  call_id: z.number().int(),
  agent_id: z.number().int(),
  tool_id: z.string(),
  routing_key: z.string().nullable(),
  at: z.string(),
  was: z.string().describe("the record's status"),
  would_be: verdictStatusSchema.describe('what dispatch would record now: `started` when the call would run'),
  reason: verdictReasonSchema,
});
export type ChangedCall = z.output<typeof changedCallSchema>;

const senderChangeSchema = z.object({
  routing_key: z.string().nullable(),
  agent_id: z.number().int(),
  tools: z.array(z.string()),
  runs: z.number().int().describe('the runs in the window of this sender with this agent'),
});
export type SenderChange = z.output<typeof senderChangeSchema>;

const scheduledChangeSchema = z.object({ agent_id: z.number().int(), tools: z.array(z.string()), runs: z.number().int() });
export type ScheduledChange = z.output<typeof scheduledChangeSchema>;

/** What a change would do to the window's recorded traffic (POST /policy/preview, SEMANTICS §15). */
export const previewImpactSchema = z.object({
  window: z.object({ from: z.string(), to: z.string() }),
  runs_examined: z.number().int(),
  calls_examined: z.number().int(),
  senders: z.object({ gaining: z.array(senderChangeSchema), losing: z.array(senderChangeSchema) }),
  scheduled: z.object({ gaining: z.array(scheduledChangeSchema), losing: z.array(scheduledChangeSchema) }),
  calls: z.object({
    changed: z.array(changedCallSchema),
    counts: z.object({
      refused: z.number().int(),
      admitted: z.number().int(),
      pending_approval: z.number().int(),
      cap_exceeded: z.number().int(),
    }),
  }),
  /** Records a replay cannot read as they came (written before toolgate kept how a call came to dispatch, or an approval's one execution). */
  not_replayed: z.object({ calls: z.number().int(), reason: z.string().nullable() }),
  truncated: z.boolean().describe('a list was cut at 100 entries; the counts count them all'),
});
export type PreviewImpact = z.output<typeof previewImpactSchema>;

/** The two policies of an agent the change reaches: as it stands, and as the change would make it. */
export interface PolicyPair {
  current: CompiledPolicy;
  candidate: CompiledPolicy;
}

/** The most entries a list of the answer holds; the counts count them all. */
const PREVIEW_LIST_LIMIT = 100;

const NOT_REPLAYED =
  'calls recorded before toolgate kept how each came to dispatch, and approved requests’ executions (their approval was decided once), are counted here and not replayed';

const STARTED: Verdict = Object.freeze({ status: 'started', reason: 'offered' });
const PENDING: Verdict = Object.freeze({ status: 'pending_approval', reason: 'needs_approval' });
const CAP_EXCEEDED: Verdict = Object.freeze({ status: 'denied', reason: 'cap_exceeded' });
const ACCESS_REFUSED: Verdict = Object.freeze({ status: 'denied', reason: 'access_rules' });
const REFUSED: Readonly<Record<'skipped' | 'denied', Readonly<Record<'not_offered' | 'needs_approval', Verdict>>>> = Object.freeze({
  skipped: Object.freeze({
    not_offered: Object.freeze<Verdict>({ status: 'skipped', reason: 'not_offered' }),
    needs_approval: Object.freeze<Verdict>({ status: 'skipped', reason: 'needs_approval' }),
  }),
  denied: Object.freeze({
    not_offered: Object.freeze<Verdict>({ status: 'denied', reason: 'not_offered' }),
    needs_approval: Object.freeze<Verdict>({ status: 'denied', reason: 'needs_approval' }),
  }),
});

/** One attachment a capped call may run through: its caps, and the times each one's counter holds. */
interface CapRoom {
  caps: readonly CapRule[];
  hits: number[][];
}

/** A call's outcome decided up to its caps: a verdict, or the attachments whose caps must have room at its time. */
type Step = Verdict | { rooms: readonly CapRoom[] };

/**
 * What dispatch would record for a call of the tool on a run's offer, up to the caps. Mirrors
 * ToolRun: the access rules first, then the offer, then approval (by how the call came), then the
 * caps, the call running through the first attachment whose every cap has room.
 */
function stepOf(offer: RunOffer, toolId: string, mode: DispatchMode, counter: (attachmentId: number, cap: CapRule) => number[]): Step {
  if (offer.access !== null && !offer.access.admitted) return ACCESS_REFUSED;
  const refused = REFUSED[mode === 'optional' ? 'skipped' : 'denied'];
  if (!offer.has(toolId)) return refused.not_offered;
  if (offer.approvalFor(toolId) !== null) return mode === 'call' ? PENDING : refused.needs_approval;
  const candidates = offer.capsFor(toolId);
  if (candidates === null) return STARTED;
  return { rooms: candidates.map((c) => ({ caps: c.caps, hits: c.caps.map((cap) => counter(c.attachment_id, cap)) })) };
}

/** The step's verdict on a call at `at`: a capped call is counted against the first attachment with room, in every cap. */
function settle(step: Step, at: number): Verdict {
  if (!('rooms' in step)) return step;
  for (const room of step.rooms) {
    let fits = true;
    for (let i = 0; i < room.caps.length && fits; i++) {
      const cap = room.caps[i]!;
      fits = used(room.hits[i]!, at - cap.window_s * 1000) < cap.limit;
    }
    if (fits) {
      for (const hits of room.hits) hits.push(at);
      return STARTED;
    }
  }
  return CAP_EXCEEDED;
}

/** How many of a counter's hits are after `since`, dropping those before (calls come in time order). */
function used(hits: number[], since: number): number {
  let gone = 0;
  while (gone < hits.length && hits[gone]! <= since) gone++;
  if (gone > 0) hits.splice(0, gone);
  return hits.length;
}

/** Whose count a cap keeps, as dispatch keys it: the agent's, a sender's, or the scheduled runs'. */
function counterKey(attachmentId: number, cap: CapRule, toolId: string, group: RunGroup): string {
  const whose = cap.per === 'agent' ? 'agent' : group.run === 'scheduled' ? 'scheduled' : `sender:${group.routing_key ?? ''}`;
  return `${group.agent_id}|${attachmentId}|${cap.tool_id === null ? '*' : toolId}|${cap.per}|${cap.window_s}|${whose}`;
}

/** Outcomes that differ: another status, or a refusal for another cause (over a cap rather than not offered). */
function differs(a: Verdict, b: Verdict): boolean {
  return a.status !== b.status || (a.reason === 'cap_exceeded') !== (b.reason === 'cap_exceeded');
}

interface RunGroup {
  key: string;
  agent_id: number;
  run: DispatchKind;
  routing_key: string | null;
  current: RunOffer;
  candidate: RunOffer;
  runs: Set<string>;
  /** Runs given counted (addRunGroup), beside the keys of those added one by one. */
  counted: number;
}

/** A call of a tool in a run group, come one way, decided once per policy. */
interface CallPlan {
  current: Step;
  candidate: Step;
}

interface Listed {
  entry: ChangedCall;
  at: number;
}

/**
 * One preview's replay: runs and calls are added (calls of capped tools in time order), and
 * impact() answers. The offers of each distinct run are made once, from the two policies given per
 * agent, less the tools withheld at dispatch (held MCP tools, SEMANTICS §14) as dispatch withholds
 * them; a record of an agent the change does not reach is not added at all.
 */
export class PolicyPreview {
  readonly #policies: ReadonlyMap<number, PolicyPair>;
  readonly #withheld: ReadonlySet<string> | undefined;
  readonly #groups = new Map<string, RunGroup>();
  readonly #plans = new Map<string, CallPlan>();
  readonly #counters = { current: new Map<string, number[]>(), candidate: new Map<string, number[]>() };
  /** The first changed calls replayed in time order, and the first of the changed groups' calls. */
  readonly #changed: Listed[] = [];
  readonly #examples: Listed[] = [];
  readonly #counts = { refused: 0, admitted: 0, pending_approval: 0, cap_exceeded: 0 };
  readonly #runs = new Set<string>();
  #runsCounted = 0;
  #calls = 0;
  #changedCalls = 0;
  #notReplayed = 0;
  #truncated = false;

  constructor(policies: ReadonlyMap<number, PolicyPair>, withheld?: ReadonlySet<string>) {
    this.#policies = policies;
    this.#withheld = withheld !== undefined && withheld.size > 0 ? withheld : undefined;
  }

  addRun(run: RecordedRun): void {
    const group = this.#group(run);
    if (group === undefined) return;
    const key = run.run_key ?? `run:${run.id}`;
    group.runs.add(key);
    this.#runs.add(key);
  }

  /** A run group's runs, counted elsewhere (each run once); `total` of addRunGroups is given to countRuns. */
  addRunGroup(runs: RecordedRunGroup): void {
    const group = this.#group(runs);
    if (group !== undefined) group.counted += runs.runs;
  }

  /** The distinct runs of the window, counted elsewhere, beside those added one by one. */
  countRuns(runs: number): void {
    this.#runsCounted += runs;
  }

  /** A call, in time order, with its run: both counted, and the call replayed. */
  addCall(call: RecordedCall): void {
    const group = this.#group(call);
    if (group === undefined) return;
    const runKey = call.run_key ?? `call:${call.id}`;
    group.runs.add(runKey);
    this.#runs.add(runKey);
    this.#replay(group, call);
  }

  /** A call, in time order, whose run is counted apart (addRunGroup): replayed alone. */
  replayCall(call: Omit<RecordedCall, 'run_key'>): void {
    const group = this.#group(call);
    if (group !== undefined) this.#replay(group, call);
  }

  /**
   * Calls counted together: each ends as the first would, whatever their order, unless some cap of
   * either policy counts the run group's calls of the tool. `changed` when the change alters their
   * outcome, so that the caller reads the first of them for the list (addChangedExample);
   * `ordered` when a cap counts them: nothing is counted, and the caller replays each of the run
   * group's calls of the tool, whatever its way of coming, in time order (replayCall).
   */
  addCallGroup(calls: RecordedCallGroup): 'same' | 'changed' | 'ordered' {
    const group = this.#group(calls);
    if (group === undefined) return 'same';
    if (calls.tool_id !== ACCESS_RULES_RECORD_ID && this.#capped(group, calls.tool_id)) return 'ordered';
    this.#calls += calls.calls;
    if (calls.tool_id === ACCESS_RULES_RECORD_ID) return 'same';
    if (calls.dispatch === null || calls.dispatch === 'approved') {
      this.#notReplayed += calls.calls;
      return 'same';
    }
    const plan = this.#plan(group, calls.tool_id, calls.dispatch);
    const was = plan.current as Verdict;
    const would = plan.candidate as Verdict;
    if (!differs(was, would)) return 'same';
    this.#tally(would, calls.calls);
    return 'changed';
  }

  /** One call of a group addCallGroup found changed, for the list; already counted. */
  addChangedExample(call: Omit<RecordedCall, 'run_key'>): void {
    const group = this.#group(call);
    if (group === undefined || call.dispatch === null || call.dispatch === 'approved') return;
    const plan = this.#plan(group, call.tool_id, call.dispatch);
    if ('rooms' in plan.current || 'rooms' in plan.candidate || !differs(plan.current, plan.candidate)) return;
    this.#list(this.#examples, call, plan.candidate);
  }

  impact(window: { from: Date; to: Date }): PreviewImpact {
    const senders = { gaining: [] as SenderChange[], losing: [] as SenderChange[] };
    const scheduled = { gaining: [] as ScheduledChange[], losing: [] as ScheduledChange[] };
    for (const group of this.#groups.values()) {
      const current = new Set(group.current.list());
      const candidate = new Set(group.candidate.list());
      const gained = [...candidate].filter((id) => !current.has(id)).sort();
      const lost = [...current].filter((id) => !candidate.has(id)).sort();
      const runs = group.runs.size + group.counted;
      if (group.run === 'scheduled') {
        if (gained.length > 0) scheduled.gaining.push({ agent_id: group.agent_id, tools: gained, runs });
        if (lost.length > 0) scheduled.losing.push({ agent_id: group.agent_id, tools: lost, runs });
      } else {
        if (gained.length > 0) senders.gaining.push({ routing_key: group.routing_key, agent_id: group.agent_id, tools: gained, runs });
        if (lost.length > 0) senders.losing.push({ routing_key: group.routing_key, agent_id: group.agent_id, tools: lost, runs });
      }
    }
    // The calls listed are the window's first changed ones, in time order, wherever each came from.
    const changed = [...this.#changed, ...this.#examples]
      .sort((a, b) => a.at - b.at || a.entry.call_id - b.entry.call_id)
      .slice(0, PREVIEW_LIST_LIMIT);
    if (this.#changedCalls > changed.length) this.#truncated = true;
    return {
      window: { from: window.from.toISOString(), to: window.to.toISOString() },
      runs_examined: this.#runs.size + this.#runsCounted,
      calls_examined: this.#calls,
      senders: { gaining: this.#listed(senders.gaining), losing: this.#listed(senders.losing) },
      scheduled: { gaining: this.#listed(scheduled.gaining), losing: this.#listed(scheduled.losing) },
      calls: { changed: changed.map((c) => c.entry), counts: { ...this.#counts } },
      not_replayed: { calls: this.#notReplayed, reason: this.#notReplayed > 0 ? NOT_REPLAYED : null },
      truncated: this.#truncated,
    };
  }

  #replay(group: RunGroup, call: Omit<RecordedCall, 'run_key'>): void {
    this.#calls++;
    // A sender refused by the access rules before any tool: a run, and no call to replay.
    if (call.tool_id === ACCESS_RULES_RECORD_ID) return;
    if (call.dispatch === null || call.dispatch === 'approved') {
      this.#notReplayed++;
      return;
    }
    const plan = this.#plan(group, call.tool_id, call.dispatch);
    const was = settle(plan.current, call.at);
    const would = settle(plan.candidate, call.at);
    if (!differs(was, would)) return;
    this.#tally(would, 1);
    this.#list(this.#changed, call, would);
  }

  #tally(would: Verdict, calls: number): void {
    this.#changedCalls += calls;
    if (would.reason === 'cap_exceeded') this.#counts.cap_exceeded += calls;
    else if (would.status === 'started') this.#counts.admitted += calls;
    else if (would.status === 'pending_approval') this.#counts.pending_approval += calls;
    else this.#counts.refused += calls;
  }

  /** Keeps the call while it is among the first its source gives (each gives its calls in time order). */
  #list(into: Listed[], call: Omit<RecordedCall, 'run_key'>, would: Verdict): void {
    if (into.length >= PREVIEW_LIST_LIMIT) return;
    into.push({
      at: call.at,
      entry: {
        call_id: call.id,
        agent_id: call.agent_id,
        tool_id: call.tool_id,
        routing_key: call.routing_key,
        at: new Date(call.at).toISOString(),
        was: call.status,
        would_be: would.status,
        reason: would.reason,
      },
    });
  }

  /** Whether some cap of either policy counts the group's calls of the tool: whether a call reaches one is the same whatever its way of coming. */
  #capped(group: RunGroup, toolId: string): boolean {
    const plan = this.#plan(group, toolId, 'call');
    return 'rooms' in plan.current || 'rooms' in plan.candidate;
  }

  #plan(group: RunGroup, toolId: string, mode: DispatchMode): CallPlan {
    const key = `${group.key}|${toolId}|${mode}`;
    let plan = this.#plans.get(key);
    if (plan === undefined) {
      const counter = (counters: Map<string, number[]>) => (attachmentId: number, cap: CapRule) => {
        const at = counterKey(attachmentId, cap, toolId, group);
        let hits = counters.get(at);
        if (hits === undefined) counters.set(at, (hits = []));
        return hits;
      };
      plan = {
        current: stepOf(group.current, toolId, mode, counter(this.#counters.current)),
        candidate: stepOf(group.candidate, toolId, mode, counter(this.#counters.candidate)),
      };
      this.#plans.set(key, plan);
    }
    return plan;
  }

  /** The most runs first, then by agent and key; at most the list limit. */
  #listed<T extends { agent_id: number; runs: number; routing_key?: string | null }>(entries: T[]): T[] {
    entries.sort((a, b) => b.runs - a.runs || a.agent_id - b.agent_id || (a.routing_key ?? '').localeCompare(b.routing_key ?? ''));
    if (entries.length <= PREVIEW_LIST_LIMIT) return entries;
    this.#truncated = true;
    return entries.slice(0, PREVIEW_LIST_LIMIT);
  }

  #group(record: { agent_id: number; run: DispatchKind; routing_key: string | null }): RunGroup | undefined {
    const pair = this.#policies.get(record.agent_id);
    if (pair === undefined) return undefined;
    const routingKey = record.run === 'sender' ? record.routing_key : null;
    const key = `${record.agent_id}|${record.run}|${routingKey ?? ''}`;
    let group = this.#groups.get(key);
    if (group === undefined) {
      const run: Run = record.run === 'sender' ? { kind: 'sender', routing_key: routingKey } : { kind: 'scheduled' };
      group = {
        key,
        agent_id: record.agent_id,
        run: record.run,
        routing_key: routingKey,
        current: this.#offer(pair.current, run),
        candidate: this.#offer(pair.candidate, run),
        runs: new Set(),
        counted: 0,
      };
      this.#groups.set(key, group);
    }
    return group;
  }

  /** The run's offer as dispatch makes it: the policy's, less what is withheld whatever it grants. */
  #offer(policy: CompiledPolicy, run: Run): RunOffer {
    const offer = policy.offer(run);
    return this.#withheld === undefined ? offer : withheldFrom(offer, this.#withheld);
  }
}
