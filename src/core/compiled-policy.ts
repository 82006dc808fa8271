// An agent's policy built once into lookup structures, like CASL's RuleIndex, so that asking which
// tools a run gets costs a few map lookups. resolve() answers exactly what resolveRun does (same
// decisions, same first-in-order matched rule); offer() (and toolsFor() and offers() over it) skips
// the why.
//
// For offer, every rule of every attachment is indexed together: exact patterns by the whole key,
// `*@domain` patterns by the key's domain, the rest tried in turn; each entry carries a bitmask of
// the attachments holding it, so one pass tells which attachments a key is denied or allowed by.
// A run's offer is then one number, the mask of the attachments that admitted it: a tool is offered
// when the mask meets the mask of the attachments carrying it. Approval (SEMANTICS §12) is a second
// mask, of the admitting attachments whose calls this run makes as usual: those without approval,
// and those whose approvers match the run's key. A tool carried only outside it can be requested.
//
// A compiled policy is immutable once built: a cache may share one between concurrent runs. This
// file is the shape a run asks of it; policy-index.ts builds it (compilePolicy), and the offers it
// makes are masked-offer.ts and listed-offer.ts.
import type { CapRule, GateDecision, Resolution, Run } from './types';

export interface CompiledPolicy {
  readonly agent_id: number;
  /** The policy version it was compiled from, which every record of a call decided by it names; null when unknown. */
  readonly version: number | null;
  resolve(run: Run): Resolution;
  /** What the run is offered, decided once: what a ToolRun keeps and checks every dispatch against. */
  offer(run: Run): RunOffer;
  /** The tools the run is offered, in a Set of the caller's own. */
  toolsFor(run: Run): Set<string>;
  offers(run: Run, toolId: string): boolean;
  /** The agent's access rules' decision on a sender run (SEMANTICS §9); null for other runs. */
  access(run: Run): GateDecision | null;
  /** Whether any attachment requires approval: without one, nothing about approvals is looked up. */
  readonly hasApprovals: boolean;
  /** Whether some attachment requiring approval carries the tool. */
  approvalCarries(toolId: string): boolean;
  /** Whether a routing key may decide the requests bound to an attachment: it requires approval, and the key matches an approver. */
  mayDecide(attachmentId: number, routingKey: string | null): boolean;
  /** Whether an attachment (still) admits the run, past the access rules, and carries the live tool. */
  grantsThrough(run: Run, attachmentId: number, toolId: string): boolean;
  /** Whether any attachment caps its members: without one, nothing about caps is counted. */
  readonly hasCaps: boolean;
  /** The caps of one attachment that apply to a call of this tool (its own, and its all-members ones). */
  capsOf(attachmentId: number, toolId: string): readonly CapRule[];
  /**
   * Each attachment's candidate terms (SEMANTICS §15), compiled with the policy: the agent's policy
   * with that attachment's candidate in place of its live terms. A run asks them only for its shadow
   * record; nothing is offered or granted by them. Empty when no attachment carries a candidate.
   */
  readonly shadows: readonly ShadowPolicy[];
}

/** One run's offer: the access rules' decision and the tools it admits. Immutable. */
export interface RunOffer {
  /** The agent's access rules' decision on a sender run; null for other runs. */
  readonly access: GateDecision | null;
  has(toolId: string): boolean;
  /** The offered tool ids, each once, in a new array. */
  list(): string[];
  /**
   * When the run can only request the tool (SEMANTICS §12), the attachment whose approval its call
   * needs (the first admitting one in order); null when a call runs as usual, or is not offered.
   */
  approvalFor(toolId: string): number | null;
  /** The offered tools this run can only request, each once, in a new array. */
  needingApproval(): string[];
  /**
   * The caps a call of the tool must find room in (SEMANTICS §13): null when an attachment that
   * lets the run call it as usual has no cap on it (grants only add); otherwise, for each such
   * attachment in order, its caps on the tool: the call runs through the first with room in all.
   */
  capsFor(toolId: string): readonly CapCandidate[] | null;
}

/** One attachment through which a capped call may run, and its caps that apply to the call. */
export interface CapCandidate {
  attachment_id: number;
  caps: readonly CapRule[];
}

/** One attachment's candidate, compiled: the agent's policy as it would be with those terms live. */
export interface ShadowPolicy {
  readonly attachment_id: number;
  readonly policy: CompiledPolicy;
  /**
   * When the candidate sets caps of its own, the stamp its counts are kept under (CandidateTerms'
   * `stamp`); null when its caps are the live ones, which the live count already counts.
   */
  readonly caps_stamp: string | null;
}
