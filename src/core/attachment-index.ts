// One attachment as the compiled policy holds it: its terms, its live members and its gate, indexed.
import type { GateIndex } from './gate-index';
import type { CapRule } from './types';

export interface AttachmentIndex {
  attachment_id: number;
  toolkit_id: number;
  toolkit_name: string;
  allow_proactive: boolean;
  tools: readonly string[];
  stale_tool_ids: readonly string[];
  gate: GateIndex;
  approvers: readonly string[] | null;
  caps: readonly CapRule[];
}
