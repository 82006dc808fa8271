// One run's shadow (SEMANTICS §15): the run's offer under each attachment's candidate terms, beside
// the live offer it is decided by. Asked only for the records: the tools a candidate would add or
// remove, and what a call would have been. Computed on first ask, from the candidates compiled with
// the policy; a policy with no candidate never builds one.
import type { RunOffer } from '../core/compiled-policy';
import {
  offerShadow,
  shadowRecord,
  verdictOf,
  verdictReason,
  type CallShadow,
  type CallShadowEntry,
  type RunShadow,
  type ShadowPolicy,
  type Verdict,
} from '../core/shadow';
import type { Run } from '../core/types';
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

  private offers(): readonly CandidateOffer[] {
    return (this.#offers ??= this.shadows.map((shadow) => {
      const offer = shadow.policy.offer(this.run);
      return { shadow, offer: this.withheld ? withheldFrom(offer, this.withheld) : offer };
    }));
  }
}
