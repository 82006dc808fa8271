// Shadow evaluation (SEMANTICS §15): an attachment's candidate terms resolved beside its live ones.
// The candidate's policy is the agent's policy with that one attachment's terms replaced, compiled
// once with the live policy (policy-index.ts), so a run asks it what it asks the live one. What the
// two decide differently is what the shadow records; nothing here offers or grants anything.
import { z } from 'zod';
import type { RunOffer } from './compiled-policy';
import type { AgentPolicyData, AttachmentPolicy, Resolution } from './types';

/** The agent's policy with one attachment's candidate terms in place of its live ones, and no candidate left in it. */
export function withCandidate(data: AgentPolicyData, attachmentId: number): AgentPolicyData {
  return { ...data, attachments: data.attachments.map((a) => (a.attachment_id === attachmentId ? candidateOf(a) : liveOf(a))) };
}

/** The policy data as runs are decided by: every candidate left out. */
export function liveOf(attachment: AttachmentPolicy): AttachmentPolicy {
  if (attachment.candidate === undefined) return attachment;
  const { candidate: _candidate, ...live } = attachment;
  return live;
}

function candidateOf(attachment: AttachmentPolicy): AttachmentPolicy {
  const live = liveOf(attachment);
  const terms = attachment.candidate;
  if (!terms) return live;
  return {
    ...live,
    ...(terms.rules !== undefined ? { rules: terms.rules } : {}),
    ...(terms.caps !== undefined ? { caps: terms.caps } : {}),
    ...(terms.approvers !== undefined ? { approvers: terms.approvers } : {}),
    ...(terms.allow_proactive !== undefined ? { allow_proactive: terms.allow_proactive } : {}),
  };
}

/** What a candidate would change of a run's offer: the tools it would add and remove, sorted. */
const runShadowEntrySchema = z.object({ attachment_id: z.number().int(), adds: z.array(z.string()), removes: z.array(z.string()) });
export type RunShadowEntry = z.output<typeof runShadowEntrySchema>;

/** How a call is decided: run as usual, refused, or filed for approval. */
export const verdictSchema = z.enum(['admitted', 'denied', 'pending_approval']);
export type Verdict = z.output<typeof verdictSchema>;

/** What a candidate would have made of a call decided otherwise by the live terms, and why. */
const callShadowEntrySchema = z.object({ attachment_id: z.number().int(), would_be: verdictSchema, reason: z.string() });
export type CallShadowEntry = z.output<typeof callShadowEntrySchema>;

/** As a record keeps it: the first differing attachment's entry, the others (when several carry a candidate) in `also`. */
export type ShadowRecord<E> = E & { also?: E[] };

export const runShadowSchema = runShadowEntrySchema
  .extend({ also: z.array(runShadowEntrySchema).optional().describe('the entries of further attachments whose candidates differ') })
  .describe("present where an attachment's candidate terms would offer otherwise (SEMANTICS §15)");
export type RunShadow = z.output<typeof runShadowSchema>;

export const callShadowSchema = callShadowEntrySchema
  .extend({ also: z.array(callShadowEntrySchema).optional().describe('the entries of further attachments whose candidates differ') })
  .describe("present where an attachment's candidate terms would have decided the call otherwise (SEMANTICS §15)");
export type CallShadow = z.output<typeof callShadowSchema>;

export function shadowRecord<E extends object>(entries: readonly E[]): ShadowRecord<E> | null {
  const [first, ...rest] = entries;
  if (first === undefined) return null;
  return rest.length === 0 ? { ...first } : { ...first, also: rest.map((e) => ({ ...e })) };
}

/** The candidate's offer against the live one: null when both offer the same tools. */
export function offerShadow(attachmentId: number, live: RunOffer, candidate: RunOffer): RunShadowEntry | null {
  const now = new Set(live.list());
  const then = new Set(candidate.list());
  const adds = [...then].filter((id) => !now.has(id)).sort();
  const removes = [...now].filter((id) => !then.has(id)).sort();
  return adds.length === 0 && removes.length === 0 ? null : { attachment_id: attachmentId, adds, removes };
}

/** How an offer decides a call of the tool (before any cap is counted). */
export function verdictOf(offer: RunOffer, toolId: string): Verdict {
  if (!offer.has(toolId)) return 'denied';
  return offer.approvalFor(toolId) === null ? 'admitted' : 'pending_approval';
}

/**
 * Why a resolution decides a call as it does: `needs_approval`; for an admitted call, the gate's
 * reason on the attachment whose terms changed when it carries the tool, else `offered`; for a
 * refusal, `access_rules`, the gate's reason on the first attachment carrying it that refused, or
 * `not_carried`.
 */
export function verdictReason(resolution: Resolution, verdict: Verdict, toolId: string, attachmentId: number): string {
  if (verdict === 'pending_approval') return 'needs_approval';
  if (verdict === 'admitted') {
    const own = resolution.attachments.find((a) => a.attachment_id === attachmentId);
    return own !== undefined && own.admitted && own.tools.includes(toolId) ? own.reason : 'offered';
  }
  if (resolution.access?.admitted === false) return 'access_rules';
  return resolution.attachments.find((a) => !a.admitted && a.tools.includes(toolId))?.reason ?? 'not_carried';
}
