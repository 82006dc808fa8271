// A preview of a policy change (SEMANTICS §15), as plain functions over plain data: the recorded
// runs and calls of a window replayed against the policy as it stands and as the change would make
// it, each compiled once. Each distinct run (an agent and a sender, or an agent's scheduled runs)
// is resolved once per policy and shared by all its calls; the calls are replayed in time order,
// so that caps count them as dispatch would have. Only what the change alters is reported: a call
// whose outcome differs between the two replays, a run whose tools differ.
import type { CapCandidate, CompiledPolicy, RunOffer } from './compiled-policy';
import type { DispatchMode } from './dispatch-mode';
import { ACCESS_RULES_RECORD_ID } from './tool-manifest';
import type { CapRule, DispatchKind, Run } from './types';

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
export type VerdictReason = 'offered' | 'access_rules' | 'not_offered' | 'needs_approval' | 'cap_exceeded';

/** What dispatch would record for a call: a record status, and why. `started`: the call would run. */
export interface Verdict {
  status: 'started' | 'denied' | 'skipped' | 'pending_approval';
  reason: VerdictReason;
}

export interface ChangedCall {
  call_id: number;
  agent_id: number;
  tool_id: string;
  routing_key: string | null;
  at: string;
  /** The record's status. */
  was: string;
  would_be: Verdict['status'];
  reason: VerdictReason;
}

export interface SenderChange {
  routing_key: string | null;
  agent_id: number;
  tools: string[];
  runs: number;
}

export interface ScheduledChange {
  agent_id: number;
  tools: string[];
  runs: number;
}

export interface PreviewImpact {
  window: { from: string; to: string };
  runs_examined: number;
  calls_examined: number;
  senders: { gaining: SenderChange[]; losing: SenderChange[] };
  scheduled: { gaining: ScheduledChange[]; losing: ScheduledChange[] };
  calls: {
    changed: ChangedCall[];
    counts: { refused: number; admitted: number; pending_approval: number; cap_exceeded: number };
  };
  /** Records a replay cannot read as they came (written before toolgate kept how a call came to dispatch, or an approval's one execution). */
  not_replayed: { calls: number; reason: string | null };
  truncated: boolean;
}

/** The two policies of an agent the change reaches: as it stands, and as the change would make it. */
export interface PolicyPair {
  current: CompiledPolicy;
  candidate: CompiledPolicy;
}

/** The most entries a list of the answer holds; the counts count them all. */
const PREVIEW_LIST_LIMIT = 100;

const NOT_REPLAYED =
  'calls recorded before toolgate kept how each came to dispatch, and approved requests’ executions (their approval was decided once), are counted here and not replayed';

/**
 * What dispatch would record for one call on a run's offer, with caps counted in `caps` (which the
 * call, when it runs, counts against). Mirrors ToolRun: the access rules first, then the offer, then
 * approval (by how the call came), then the caps, the call running through the first attachment
 * whose every cap has room.
 */
function replayCall(
  offer: RunOffer,
  call: Pick<RecordedCall, 'agent_id' | 'tool_id' | 'run' | 'routing_key' | 'at'>,
  mode: DispatchMode,
  caps: CapCounts,
): Verdict {
  if (offer.access !== null && !offer.access.admitted) return { status: 'denied', reason: 'access_rules' };
  const refused = (reason: VerdictReason): Verdict => ({ status: mode === 'optional' ? 'skipped' : 'denied', reason });
  if (!offer.has(call.tool_id)) return refused('not_offered');
  if (offer.approvalFor(call.tool_id) !== null) {
    return mode === 'call' ? { status: 'pending_approval', reason: 'needs_approval' } : refused('needs_approval');
  }
  const candidates = offer.capsFor(call.tool_id);
  if (candidates !== null && !caps.claim(candidates, call)) return { status: 'denied', reason: 'cap_exceeded' };
  return { status: 'started', reason: 'offered' };
}

/** Caps' counts over a replay, in time order: each counter the times of the calls it counted. */
class CapCounts {
  readonly #hits = new Map<string, number[]>();

  /** Counts the call against the first candidate whose every cap has room at its time; false when none has. */
  claim(candidates: readonly CapCandidate[], call: Pick<RecordedCall, 'agent_id' | 'tool_id' | 'run' | 'routing_key' | 'at'>): boolean {
    for (const candidate of candidates) {
      const counters = candidate.caps.map((cap) => ({ cap, hits: this.#counter(counterKey(candidate.attachment_id, cap, call)) }));
      if (counters.every(({ cap, hits }) => used(hits, call.at - cap.window_s * 1000) < cap.limit)) {
        for (const { hits } of counters) hits.push(call.at);
        return true;
      }
    }
    return false;
  }

  #counter(key: string): number[] {
    let hits = this.#hits.get(key);
    if (hits === undefined) this.#hits.set(key, (hits = []));
    return hits;
  }
}

/** How many of a counter's hits are after `since`, dropping those before (calls come in time order). */
function used(hits: number[], since: number): number {
  let gone = 0;
  while (gone < hits.length && hits[gone]! <= since) gone++;
  if (gone > 0) hits.splice(0, gone);
  return hits.length;
}

/** Whose count a cap keeps, as dispatch keys it: the agent's, a sender's, or the scheduled runs'. */
function counterKey(attachmentId: number, cap: CapRule, call: Pick<RecordedCall, 'agent_id' | 'tool_id' | 'run' | 'routing_key'>): string {
  const whose = cap.per === 'agent' ? 'agent' : call.run === 'scheduled' ? 'scheduled' : `sender:${call.routing_key ?? ''}`;
  return `${call.agent_id}|${attachmentId}|${cap.tool_id === null ? '*' : call.tool_id}|${cap.per}|${cap.window_s}|${whose}`;
}

/** Outcomes that differ: another status, or a refusal for another cause (over a cap rather than not offered). */
function differs(a: Verdict, b: Verdict): boolean {
  return a.status !== b.status || (a.reason === 'cap_exceeded') !== (b.reason === 'cap_exceeded');
}

interface RunGroup {
  agent_id: number;
  run: DispatchKind;
  routing_key: string | null;
  current: RunOffer;
  candidate: RunOffer;
  runs: Set<string>;
}

/**
 * One preview's replay: runs and calls are added (calls in time order), and impact() answers. The
 * offers of each distinct run are made once, from the two policies given per agent; a record of an
 * agent the change does not reach is not added at all.
 */
export class PolicyPreview {
  readonly #policies: ReadonlyMap<number, PolicyPair>;
  readonly #groups = new Map<string, RunGroup>();
  readonly #currentCaps = new CapCounts();
  readonly #candidateCaps = new CapCounts();
  readonly #changed: ChangedCall[] = [];
  readonly #counts = { refused: 0, admitted: 0, pending_approval: 0, cap_exceeded: 0 };
  readonly #runs = new Set<string>();
  #calls = 0;
  #notReplayed = 0;
  #truncated = false;

  constructor(policies: ReadonlyMap<number, PolicyPair>) {
    this.#policies = policies;
  }

  addRun(run: RecordedRun): void {
    const group = this.#group(run);
    if (group === undefined) return;
    const key = run.run_key ?? `run:${run.id}`;
    group.runs.add(key);
    this.#runs.add(key);
  }

  addCall(call: RecordedCall): void {
    const group = this.#group(call);
    if (group === undefined) return;
    this.#calls++;
    const runKey = call.run_key ?? `call:${call.id}`;
    group.runs.add(runKey);
    this.#runs.add(runKey);
    // A sender refused by the access rules before any tool: a run, and no call to replay.
    if (call.tool_id === ACCESS_RULES_RECORD_ID) return;
    if (call.dispatch === null || call.dispatch === 'approved') {
      this.#notReplayed++;
      return;
    }
    const was = replayCall(group.current, call, call.dispatch, this.#currentCaps);
    const would = replayCall(group.candidate, call, call.dispatch, this.#candidateCaps);
    if (!differs(was, would)) return;
    if (would.reason === 'cap_exceeded') this.#counts.cap_exceeded++;
    else if (would.status === 'started') this.#counts.admitted++;
    else if (would.status === 'pending_approval') this.#counts.pending_approval++;
    else this.#counts.refused++;
    if (this.#changed.length >= PREVIEW_LIST_LIMIT) {
      this.#truncated = true;
      return;
    }
    this.#changed.push({
      call_id: call.id,
      agent_id: call.agent_id,
      tool_id: call.tool_id,
      routing_key: call.routing_key,
      at: new Date(call.at).toISOString(),
      was: call.status,
      would_be: would.status,
      reason: would.reason,
    });
  }

  impact(window: { from: Date; to: Date }): PreviewImpact {
    const senders = { gaining: [] as SenderChange[], losing: [] as SenderChange[] };
    const scheduled = { gaining: [] as ScheduledChange[], losing: [] as ScheduledChange[] };
    for (const group of this.#groups.values()) {
      const current = new Set(group.current.list());
      const candidate = new Set(group.candidate.list());
      const gained = [...candidate].filter((id) => !current.has(id)).sort();
      const lost = [...current].filter((id) => !candidate.has(id)).sort();
      const runs = group.runs.size;
      if (group.run === 'scheduled') {
        if (gained.length > 0) scheduled.gaining.push({ agent_id: group.agent_id, tools: gained, runs });
        if (lost.length > 0) scheduled.losing.push({ agent_id: group.agent_id, tools: lost, runs });
      } else {
        if (gained.length > 0) senders.gaining.push({ routing_key: group.routing_key, agent_id: group.agent_id, tools: gained, runs });
        if (lost.length > 0) senders.losing.push({ routing_key: group.routing_key, agent_id: group.agent_id, tools: lost, runs });
      }
    }
    return {
      window: { from: window.from.toISOString(), to: window.to.toISOString() },
      runs_examined: this.#runs.size,
      calls_examined: this.#calls,
      senders: { gaining: this.#listed(senders.gaining), losing: this.#listed(senders.losing) },
      scheduled: { gaining: this.#listed(scheduled.gaining), losing: this.#listed(scheduled.losing) },
      calls: { changed: [...this.#changed], counts: { ...this.#counts } },
      not_replayed: { calls: this.#notReplayed, reason: this.#notReplayed > 0 ? NOT_REPLAYED : null },
      truncated: this.#truncated,
    };
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
        agent_id: record.agent_id,
        run: record.run,
        routing_key: routingKey,
        current: pair.current.offer(run),
        candidate: pair.candidate.offer(run),
        runs: new Set(),
      };
      this.#groups.set(key, group);
    }
    return group;
  }
}
