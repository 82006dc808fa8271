// The two system tools of an agent run (SEMANTICS §12): approve_request and deny_request, offered
// only to a run whose sender may decide a request pending in its thread. They come from no toolkit
// and are not in the manifest: what they may touch is the thread's own pending requests, decided by
// an approver. The catalogue the model reads lists those requests, so a model names the one meant.
import { z } from 'zod';
import type { AgentToolSpec, DecidableRequest } from '../llm/agent-step';

export const APPROVE_REQUEST = 'approve_request';
export const DENY_REQUEST = 'deny_request';
export const SYSTEM_TOOLS = [APPROVE_REQUEST, DENY_REQUEST] as const;
export type SystemTool = (typeof SYSTEM_TOOLS)[number];

export const decideInput = z.strictObject({ request_id: z.number().int().positive() });

export function isSystemTool(name: string): name is SystemTool {
  return (SYSTEM_TOOLS as readonly string[]).includes(name);
}

/** The two tools as a model is offered them, each listing the requests it may decide. */
export function systemToolSpecs(decidable: readonly DecidableRequest[]): AgentToolSpec[] {
  const pending = decidable.map(describeRequest).join('; ');
  const input_schema = z.toJSONSchema(decideInput, { io: 'input' }) as Record<string, unknown>;
  delete input_schema.$schema;
  return [
    {
      id: APPROVE_REQUEST,
      display_name: 'Approve request',
      summary: `Approves a request pending in this thread and runs it exactly as it was asked, once. Pending: ${pending}.`,
      input_schema,
    },
    {
      id: DENY_REQUEST,
      display_name: 'Deny request',
      summary: `Denies a request pending in this thread: it never runs. Pending: ${pending}.`,
      input_schema,
    },
  ];
}

/** "request 7: process_refund {"order_id":"SCP-1042"} asked by jane@acme.com". */
export function describeRequest(request: DecidableRequest): string {
  const input = JSON.stringify(request.input ?? {});
  return `request ${request.id}: ${request.tool} ${input.length > 200 ? `${input.slice(0, 200)}…` : input} asked by ${request.requested_by ?? 'a scheduled run'}`;
}

const NAMED = /\brequests?\s*(?:#|no\.?|number)?\s*(\d{1,9})\b|#(\d{1,9})\b/gi;

/** The request ids a message names ("request 7", "#7"), in order. */
export function namedRequests(text: string): number[] {
  return [...text.matchAll(NAMED)].map((m) => Number(m[1] ?? m[2]));
}
