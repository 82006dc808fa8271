// A run's offer as a mask of the attachments that admitted it: the whole offer is one number and a
// few references, and asking whether a tool is offered is one map lookup and an AND.
import type { AttachmentIndex } from './attachment-index';
import type { CapCandidate, RunOffer } from './compiled-policy';
import { capsOnTool } from './resolution';
import type { GateDecision } from './types';

/** An offer as a mask of admitting attachments: a run's whole offer is one number and a few references. */
export class MaskedOffer implements RunOffer {
  constructor(
    readonly access: GateDecision | null,
    private readonly admitted: number,
    /** The admitting attachments whose members this run calls as usual (all of them without approvals). */
    private readonly direct: number,
    private readonly carriers: ReadonlyMap<string, number>,
    private readonly attachments: readonly AttachmentIndex[],
    private readonly capped: boolean,
  ) {}

  capsFor(toolId: string): readonly CapCandidate[] | null {
    if (!this.capped) return null;
    const through = (this.carriers.get(toolId) ?? 0) & this.direct;
    const candidates: CapCandidate[] = [];
    for (let i = 0; i < this.attachments.length; i++) {
      if ((through & (1 << i)) === 0) continue;
      const a = this.attachments[i]!;
      const caps = capsOnTool(a.caps, toolId);
      // Grants only add: one attachment that lets the call run uncapped leaves it uncapped.
      if (caps.length === 0) return null;
      candidates.push({ attachment_id: a.attachment_id, caps });
    }
    return candidates.length === 0 ? null : candidates;
  }

  has(toolId: string): boolean {
    return ((this.carriers.get(toolId) ?? 0) & this.admitted) !== 0;
  }

  approvalFor(toolId: string): number | null {
    if (this.direct === this.admitted) return null;
    const carriers = this.carriers.get(toolId) ?? 0;
    const requestable = carriers & this.admitted;
    if (requestable === 0 || (carriers & this.direct) !== 0) return null;
    // The lowest bit: the first admitting attachment, in attachment order, that carries the tool.
    return this.attachments[31 - Math.clz32(requestable & -requestable)]?.attachment_id ?? null;
  }

  needingApproval(): string[] {
    if (this.direct === this.admitted) return [];
    return this.list().filter((id) => this.approvalFor(id) !== null);
  }

  list(): string[] {
    const tools = new Set<string>();
    this.attachments.forEach((a, i) => {
      if ((this.admitted & (1 << i)) !== 0) for (const id of a.tools) tools.add(id);
    });
    return [...tools];
  }
}
