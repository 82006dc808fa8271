// A run's offer as a list: a refused sender's (nothing), and the offer of an agent with more
// attachments than a mask holds, read from its explained resolution.
import type { CapCandidate, RunOffer } from './compiled-policy';
import type { CapRule, GateDecision, Resolution } from './types';

/** An offer as a list: a refused sender's (nothing), and an agent's with more attachments than a mask holds. */
export class ListedOffer implements RunOffer {
  readonly #tools: ReadonlySet<string>;
  readonly #approvals: ReadonlyMap<string, number>;

  constructor(
    readonly access: GateDecision | null,
    tools: readonly string[],
    approvals: ReadonlyMap<string, number> = new Map(),
    private readonly caps: ((toolId: string) => readonly CapCandidate[] | null) | null = null,
  ) {
    this.#tools = new Set(tools);
    this.#approvals = approvals;
  }

  capsFor(toolId: string): readonly CapCandidate[] | null {
    return this.caps === null ? null : this.caps(toolId);
  }

  /** The offer a resolution explains: each tool it can only request bound to its first admitting attachment. */
  static of(resolution: Resolution, capsOf: ((attachmentId: number, toolId: string) => readonly CapRule[]) | null): ListedOffer {
    const approvals = new Map<string, number>();
    for (const id of resolution.needs_approval) {
      const through = resolution.attachments.find((a) => a.admitted && a.needs_approval && a.tools.includes(id));
      if (through) approvals.set(id, through.attachment_id);
    }
    const direct = resolution.attachments.filter((a) => a.admitted && !a.needs_approval).map((a) => a.attachment_id);
    return new ListedOffer(
      resolution.access,
      resolution.tools,
      approvals,
      capsOf === null ? null : (toolId) => candidatesOf(direct, toolId, resolution, capsOf),
    );
  }

  has(toolId: string): boolean {
    return this.#tools.has(toolId);
  }

  list(): string[] {
    return [...this.#tools];
  }

  approvalFor(toolId: string): number | null {
    return this.#approvals.get(toolId) ?? null;
  }

  needingApproval(): string[] {
    return [...this.#approvals.keys()];
  }
}

/** capsFor() over a resolution: the direct carriers in order, or null when one is uncapped. */
function candidatesOf(
  direct: readonly number[],
  toolId: string,
  resolution: Resolution,
  capsOf: (attachmentId: number, toolId: string) => readonly CapRule[],
): CapCandidate[] | null {
  const candidates: CapCandidate[] = [];
  for (const a of resolution.attachments) {
    if (!direct.includes(a.attachment_id) || !a.tools.includes(toolId)) continue;
    const caps = capsOf(a.attachment_id, toolId);
    if (caps.length === 0) return null;
    candidates.push({ attachment_id: a.attachment_id, caps });
  }
  return candidates.length === 0 ? null : candidates;
}
