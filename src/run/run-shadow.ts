// One run's shadow (SEMANTICS §15): the run's offer under each attachment's candidate terms, beside
// the live offer it is decided by. Asked only for the records: the tools a candidate would add or
// remove, and what a call would have been. Computed on first ask, from the candidates compiled with
// the policy; a policy with no candidate never builds one.
import type { RunOffer, ShadowPolicy } from '../core/compiled-policy';
import {
  offerShadow,
  shadowRecord,
  verdictOf,
  verdictReason,
  type CallShadow,
  type CallShadowEntry,
  type RunShadow,
  type Verdict,
} from '../core/shadow';
import type { Run } from '../core/types';
import type { CapScope } from '../services/cap-usage';
import { shadowCapKey, type ShadowCapEntry } from '../services/shadow-caps';
import { withheldFrom } from '../core/withheld-offer';

interface CandidateOffer {
  shadow: ShadowPolicy;
  offer: RunOffer;
}

export class RunShadows {
  #offers: readonly CandidateOffer[] | undefined;

  constructor(
    private readonly run: Run,
    private readonly live: RunOffer,
    private readonly shadows: readonly ShadowPolicy[],
    private readonly withheld: ReadonlySet<string> | undefined,
  ) {}

  /** What the candidates would change of the run's offer; null when none would. */
  runShadow(): RunShadow | null {
    return shadowRecord(this.offers().flatMap((c) => offerShadow(c.shadow.attachment_id, this.live, c.offer) ?? []));
  }

  /** What the candidates would have made of a call the live terms decided as `live`; null when each agrees. */
  callShadow(toolId: string, live: Verdict): CallShadow | null {
    return shadowRecord(
      this.offers().flatMap((c): CallShadowEntry[] => {
        const would = verdictOf(c.offer, toolId);
        if (would === live) return [];
        const reason = verdictReason(c.shadow.policy.resolve(this.run), would, toolId, c.shadow.attachment_id);
        return [{ attachment_id: c.shadow.attachment_id, would_be: would, reason }];
      }),
    );
  }

  /**
   * For a call the live terms let run, whose record carries callShadow(toolId, 'admitted'): each
   * candidate's entry, and where a candidate's own caps would count the call, the entry it gets when
   * they are full (`cap_exceeded`). Null when no candidate's caps count it: none sets caps, or none
   * would admit the call, or under the candidate it runs uncapped. A call the candidate could run
   * through another capped attachment too is not counted: which one's room it would take is not
   * known from the live traffic.
   */
  capCount(toolId: string, scope: CapScope): ShadowCapEntry[] | null {
    let counts = false;
    const entries = this.offers().flatMap((c): ShadowCapEntry[] => {
      const attachmentId = c.shadow.attachment_id;
      const would = verdictOf(c.offer, toolId);
      if (would !== 'admitted') {
        return [
          {
            entry: {
              attachment_id: attachmentId,
              would_be: would,
              reason: verdictReason(c.shadow.policy.resolve(this.run), would, toolId, attachmentId),
            },
          },
        ];
      }
      const stamp = c.shadow.caps_stamp;
      const through = stamp === null ? null : c.offer.capsFor(toolId);
      if (stamp === null || through === null || through.length !== 1 || through[0]?.attachment_id !== attachmentId) return [];
      counts = true;
      const caps = through[0].caps.map((cap) => ({
        key: shadowCapKey(attachmentId, stamp, cap, toolId, scope),
        limit: cap.limit,
        window_s: cap.window_s,
      }));
      return [{ entry: { attachment_id: attachmentId, would_be: 'denied', reason: 'cap_exceeded' }, caps }];
    });
    return counts ? entries : null;
  }

  private offers(): readonly CandidateOffer[] {
    return (this.#offers ??= this.shadows.map((shadow) => {
      const offer = shadow.policy.offer(this.run);
      return { shadow, offer: this.withheld ? withheldFrom(offer, this.withheld) : offer };
    }));
  }
}
