// A run's offer less the tools withheld at dispatch whatever the policy grants: an MCP tool whose
// server changed its definition is held until an operator accepts it (SEMANTICS §14). The set is
// read at each check, so a tool held after the run started is refused from then on.
import type { RunOffer } from './compiled-policy';

export function withheldFrom(offer: RunOffer, withheld: ReadonlySet<string>): RunOffer {
  const kept = (id: string) => !withheld.has(id);
  return {
    access: offer.access,
    has: (id) => kept(id) && offer.has(id),
    list: () => offer.list().filter(kept),
    approvalFor: (id) => (kept(id) ? offer.approvalFor(id) : null),
    needingApproval: () => offer.needingApproval().filter(kept),
    capsFor: (id) => offer.capsFor(id),
  };
}
