// A ToolRun with its dependencies faked in memory, for tests of the dispatch path and the
// middleware around it: every call the run makes is logged, in order, and the policy is the real
// compiled one from plain data.
import { z } from 'zod';
import type { ApprovalRequestView, NewApprovalRequest } from '../../src/core/approval-request';
import { compilePolicy } from '../../src/core/policy-index';
import type { AgentPolicyData, AttachmentPolicy } from '../../src/core/types';
import { ToolRun, type DispatchRun, type ToolRunDeps } from '../../src/run/tool-run';
import type { ToolCallOutcome, ToolCallRecord } from '../../src/services/tool-calls';
import type { ToolImplementation } from '../../src/tools/tool-registry';

export const AGENT = { id: 7, name: 'Support', system_prompt: null, escalation_address: null };
export const MARA: DispatchRun = { kind: 'sender', routing_key: 'mara@thescoop.com' };
export const LIVE = new Set(['lookup_order', 'issue_refund', 'check_stock', 'email_analyzer', 'task_creator']);

/** One attachment, admitting `allow` patterns; `approvers` makes its members requested, not run. */
export function attachment(id: number, members: string[], extra: Partial<AttachmentPolicy> = {}): AttachmentPolicy {
  return {
    attachment_id: id,
    toolkit_id: id,
    toolkit_name: `Kit ${id}`,
    allow_proactive: false,
    member_tool_ids: members,
    rules: [{ id: id * 10, kind: 'allow', pattern: '*@thescoop.com' }],
    ...extra,
  };
}

const ORDER = z.strictObject({ order: z.string().min(1) });

export type Event = { kind: 'record' | 'start' | 'complete' | 'file' | 'ran'; detail: unknown };

/** In-memory dependencies that log every call in order. */
export function fakes(overrides: Partial<ToolRunDeps> = {}) {
  const events: Event[] = [];
  let nextId = 100;
  const tool = (id: string): ToolImplementation => ({
    id,
    input: ORDER,
    execute: (input: z.infer<typeof ORDER>) => {
      events.push({ kind: 'ran', detail: { id, input } });
      if (input.order === 'explode') throw new Error('the order system is down');
      return { found: input.order };
    },
  });
  const deps: ToolRunDeps = {
    legacyName: (id) => id,
    implementation: (id) => (LIVE.has(id) ? tool(id) : undefined),
    toolContext: { sequelize: undefined as never },
    record: async (r: ToolCallRecord) => void events.push({ kind: 'record', detail: { tool_id: r.tool_id, status: r.status } }),
    start: async (r, caps) => {
      events.push({ kind: 'start', detail: { tool_id: r.tool_id, capped: caps !== null } });
      return (nextId += 1);
    },
    complete: async (id: number, outcome: ToolCallOutcome) =>
      void events.push({ kind: 'complete', detail: { id, status: outcome.status, error: outcome.error } }),
    onRecordError: (err) => events.push({ kind: 'complete', detail: { failedToWrite: (err as Error).message } }),
    onFault: () => undefined,
    fileApproval: async (request: NewApprovalRequest) => {
      events.push({ kind: 'file', detail: { tool: request.tool_id, attachment: request.attachment_id, input: request.input } });
      return { request: { id: 1, tool: request.tool_id } as unknown as ApprovalRequestView, created: true };
    },
    claimApproval: async () => null,
    approvalExpiryMs: 60_000,
    ...overrides,
  };
  return { deps, events };
}

export function runOf(data: Omit<AgentPolicyData, 'agent_id'>, deps: ToolRunDeps, run: DispatchRun = MARA): ToolRun {
  return new ToolRun(AGENT, run, compilePolicy({ agent_id: AGENT.id, ...data }, LIVE), deps);
}
