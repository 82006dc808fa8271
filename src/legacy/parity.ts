// The migration's guarantee, checked: for one agent and every registered tool, the legacy answer
// (its string, read by the legacy check itself) equals the new resolution for a sender run. Pure;
// the apply runs it over what it wrote, read back before commit, and a dry run over its plan.
import { compilePolicy } from '../core/policy-index';
import { legacyHasTool } from '../core/legacy-enabled-tools';
import type { AgentPolicyData } from '../core/types';
import type { ParityMismatch } from './report';

// "With any sender": a grant with no rules admits every routing key and none at all (SEMANTICS
// §5), so the structural check below settles every sender; these two runs then sample both cases.
const PROBE_KEY = 'parity-probe@example.invalid';
export const PARITY_RUNS = ['sender run with a routing key', 'sender run with no routing key'];

export interface ParityCase {
  agent_id: number;
  enabled_tools: string | null;
  policy: AgentPolicyData;
  /** Tools granted by mapping a mistyped token, where the new answer may say yes and the legacy one no. */
  mapped_ids: readonly string[];
}

export function checkParity(input: ParityCase, liveToolIds: ReadonlySet<string>, tools: readonly string[]): ParityMismatch[] {
  const mismatches: ParityMismatch[] = [];
  const structural = (problem: string) => mismatches.push({ agent_id: input.agent_id, tool_id: null, legacy: null, new: null, problem });
  for (const a of input.policy.attachments) {
    if (a.rules.length > 0)
      structural(`attachment ${a.attachment_id} (${a.toolkit_name}) has gate rules, so its grant depends on the sender`);
    if (a.allow_proactive)
      structural(`attachment ${a.attachment_id} (${a.toolkit_name}) allows scheduled runs, which the legacy string never granted`);
  }
  const policy = compilePolicy(input.policy, liveToolIds);
  const mapped = new Set(input.mapped_ids);
  for (const tool of tools) {
    const legacy = legacyHasTool(input.enabled_tools, tool);
    const expected = legacy || mapped.has(tool);
    const withKey = policy.offers({ kind: 'sender', routing_key: PROBE_KEY }, tool);
    const withoutKey = policy.offers({ kind: 'sender', routing_key: null }, tool);
    if (withKey !== expected || withoutKey !== expected) {
      mismatches.push({
        agent_id: input.agent_id,
        tool_id: tool,
        legacy,
        new: withKey === expected ? withoutKey : withKey,
        problem: mapped.has(tool) ? 'a mapped typo is not granted' : 'the new answer differs from the legacy one',
      });
    }
  }
  return mismatches;
}
