// The local model's agent steps: a small rule-based planner, offline and deterministic, good enough
// to replay the seed's scenario. It reads the message at hand (and the thread for an order it is
// about) and names tools the way a language model would: through the run loop, one call at a time,
// so every call is checked at dispatch like any model's.
//
// Like a real model that saw a tool succeed earlier in the thread, it will try that tool again
// when the message asks for it, even when this run was not offered it: the run loop refuses it at
// dispatch and gives the refusal back, which is the backstop the seed describes.
//
// An order is the one the message names, else the latest one a participant named in their own
// words earlier in the thread (SEMANTICS §11): never one from a reply, a tool call, quoted history
// or a signature, so no text but the requesters' own chooses what a tool acts on.
//
// Rules, in order, each at most once per run:
// - a sender who may decide a pending request (SEMANTICS §12), writing an approval or a refusal →
//   approve_request or deny_request {request_id}: the request the message names, else the thread's
//   only one (with several and none named, nothing: the reply lists them)
// - otherwise, an approval or a "process it" about an order → process_refund {order_id}; but not when
//   this run may refund and the thread shows that order refunded already (a careful model does not
//   repeat an action: it says it was done). A run that may not refund still tries, and is refused.
// - a refund asked for an order, when this run may only request process_refund → process_refund
//   {order_id}: the call is filed for the shop's approval
// - an order id in the message → lookup_order {order_id}
// - a question about stock or flavors, or a stock report instruction → check_flavor_stock {}
// - an instruction to send (a report) to an address → send_email {to, subject, body}
// - a question, with document_search offered → document_search {query}
// Then the reply, written from what the run's tool calls gave back; it asks to copy the agent's
// escalation address when it passes a request on to the shop.
import type { AgentStepRequest, AgentStepResult, AgentToolSpec, AgentTurn, DecidableRequest } from '../agent-step';
import { ownText, sentencesOf } from './email-text';
import { senderOf } from './sender';
import { shorten } from './shorten';

const ORDER_ID = /\bSCP-\d{1,8}\b/i;
const PROCESS_INTENT = /\b(approved?|approve|process (it|this|that|them|the refund|another( one)?)|go ahead|refund (it|this|that|them))\b/i;
const REFUSE_INTENT = /\b(not approved|denied|deny|rejected|reject|declined?|refused?)\b/i;
const REFUSE_WORDS = new RegExp(REFUSE_INTENT.source, 'gi');
const REQUEST_NAMED = /\brequests?\s*(?:#|no\.?|number)?\s*(\d{1,9})\b|#(\d{1,9})\b/gi;
const REFUND_WORD = /\brefund/i;
const STOCK_INTENT = /\b(in stock|stock|pints?|flavou?rs?)\b/i;
const SEND_TO = /\b(?:send|email|mail)\b[^@]*?\bto\s+([^\s,;<>()]+@[^\s,;<>()]+?)[.,;]?(?:\s|$)/i;
const QUESTION = /\?\s*$/;

interface PlannedCall {
  tool: string;
  input: Record<string, unknown>;
}

interface RunView {
  /** The message at hand: an inbound message's subject and body, or the instruction. */
  text: string;
  from: string | null;
  instruction: boolean;
  /** The turns before the message at hand: the thread's history. */
  history: readonly AgentTurn[];
  /** This run's calls and results so far, by tool. */
  calls: Map<string, Extract<AgentTurn, { role: 'tool_result' }> | null>;
}

export function planAgentStep(request: AgentStepRequest): AgentStepResult {
  const view = viewOf(request.turns);
  const offeredOrSeen = new Set([...request.tools.map((t) => t.id), ...succeededBefore(view.history)]);
  const requestable = new Set(request.tools.filter((t) => t.needs_approval).map((t) => t.id));
  const granted = new Set(request.tools.filter((t) => !t.needs_approval).map((t) => t.id));
  const next = plan(view, offeredOrSeen, granted, requestable, request.decidable ?? []).find((call) => !view.calls.has(call.tool));
  if (next) {
    return {
      kind: 'tool_calls',
      calls: [{ call_id: `local_${request.turns.length}`, tool: next.tool, arguments: JSON.stringify(next.input) }],
    };
  }
  const text = reply(view, request);
  return { kind: 'reply', text, ...(passedOn(view) ? { escalate: true } : {}) };
}

function viewOf(turns: readonly AgentTurn[]): RunView {
  let at = -1;
  turns.forEach((turn, i) => {
    if (turn.role === 'inbound' || turn.role === 'instruction') at = i;
  });
  const current = turns[at];
  const calls: RunView['calls'] = new Map();
  for (const turn of turns.slice(at + 1)) {
    if (turn.role === 'tool_call' && !calls.has(turn.tool)) calls.set(turn.tool, null);
    if (turn.role === 'tool_result') calls.set(turn.tool, turn);
  }
  if (current?.role === 'inbound') {
    const { subject, body, from } = current.message;
    // What the sender wrote: quoted history and signatures name orders and ask questions too.
    return {
      text: [subject ?? '', ...ownText(body)].join('\n'),
      from,
      instruction: false,
      history: turns.slice(0, Math.max(at, 0)),
      calls,
    };
  }
  return {
    text: current?.role === 'instruction' ? current.text : '',
    from: null,
    instruction: true,
    history: turns.slice(0, Math.max(at, 0)),
    calls,
  };
}

/** The tools a call earlier in the thread used successfully: what a model would echo. */
function succeededBefore(history: readonly AgentTurn[]): string[] {
  return history.flatMap((turn) => (turn.role === 'tool_result' && turn.status === 'success' ? [turn.tool] : []));
}

/** Whether the text approves and refuses at once: an approval word left once the refusals are taken out. */
function mixedIntent(text: string): boolean {
  return REFUSE_INTENT.test(text) && PROCESS_INTENT.test(text.replace(REFUSE_WORDS, ' '));
}

/** Whether a refund of the order succeeded earlier in the thread: directly, or as an approved request. */
function refundedBefore(history: readonly AgentTurn[], order: string): boolean {
  return history.some((turn) => {
    if (turn.role !== 'tool_result' || turn.status !== 'success' || (turn.tool !== 'process_refund' && turn.tool !== 'approve_request'))
      return false;
    // History holds results as (possibly cut) JSON text.
    const text = typeof turn.output === 'string' ? turn.output : JSON.stringify(turn.output ?? null);
    return text.includes(`"order_id":"${order}"`) && text.includes('"refunded":true');
  });
}

/**
 * The order the message is about: named in the sender's own words, else the latest one a
 * participant named in their own words earlier in the thread. The history holds only participants'
 * messages; replies, tool calls and quoted text never choose an order.
 */
function orderOf(view: RunView): string | null {
  const named = ORDER_ID.exec(view.text)?.[0];
  if (named) return named.toUpperCase();
  for (const turn of [...view.history].reverse()) {
    if (turn.role !== 'inbound') continue;
    const found = ORDER_ID.exec([turn.message.subject ?? '', ...ownText(turn.message.body)].join('\n'))?.[0];
    if (found) return found.toUpperCase();
  }
  return null;
}

/** The pending request a decision is about: the one the message names, else the only one; null when several wait and none is named. */
function requestToDecide(view: RunView, decidable: readonly DecidableRequest[]): DecidableRequest | null {
  const named = [...view.text.matchAll(REQUEST_NAMED)].map((m) => Number(m[1] ?? m[2]));
  const chosen = decidable.find((r) => named.includes(r.id));
  if (chosen) return chosen;
  return decidable.length === 1 ? (decidable[0] ?? null) : null;
}

function plan(
  view: RunView,
  known: ReadonlySet<string>,
  granted: ReadonlySet<string>,
  requestable: ReadonlySet<string>,
  decidable: readonly DecidableRequest[],
): PlannedCall[] {
  const calls: PlannedCall[] = [];
  const order = orderOf(view);
  const namesOrder = ORDER_ID.test(view.text);
  // A message that both approves and refuses ("Approved: the courier refused the return") decides
  // nothing: a decision cannot be undone, and the reply asks which.
  const mixed = mixedIntent(view.text);
  const refuses = !mixed && REFUSE_INTENT.test(view.text);
  const approves = !mixed && !refuses && PROCESS_INTENT.test(view.text);
  // An approver's yes or no decides what waits in the thread: it does not call the tool anew, in
  // this step or after the decision.
  const decided = view.calls.has('approve_request') || view.calls.has('deny_request');
  const deciding = (decidable.length > 0 || decided) && (approves || refuses);
  if (deciding) {
    const chosen = requestToDecide(view, decidable);
    if (chosen) calls.push({ tool: refuses ? 'deny_request' : 'approve_request', input: { request_id: chosen.id } });
  }
  const repeats = order !== null && granted.has('process_refund') && refundedBefore(view.history, order);
  if (!deciding && order && approves && known.has('process_refund') && !repeats)
    calls.push({ tool: 'process_refund', input: { order_id: order } });
  if (!deciding && order && REFUND_WORD.test(view.text) && requestable.has('process_refund'))
    calls.push({ tool: 'process_refund', input: { order_id: order } });
  if (order && namesOrder && known.has('lookup_order')) calls.push({ tool: 'lookup_order', input: { order_id: order } });
  if (STOCK_INTENT.test(view.text) && known.has('check_flavor_stock')) calls.push({ tool: 'check_flavor_stock', input: {} });
  const to = view.instruction ? SEND_TO.exec(view.text)?.[1] : undefined;
  if (to && known.has('send_email'))
    calls.push({ tool: 'send_email', input: { to, subject: subjectOf(view.text), body: reportBody(view) } });
  if (QUESTION.test(view.text.trim()) && known.has('document_search'))
    calls.push({ tool: 'document_search', input: { query: lastSentence(view.text) } });
  return calls;
}

function subjectOf(instruction: string): string {
  return /stock report/i.test(instruction) ? 'Morning stock report' : 'A note from the agent';
}

/** What an email the run sends says: the stock this run found, when it looked. */
function reportBody(view: RunView): string {
  const stock = view.calls.get('check_flavor_stock');
  if (stock?.status === 'success') return stockLines(stock.output).join('\n') || 'No flavors are listed.';
  return 'The stock could not be checked this morning.';
}

function stockLines(output: unknown): string[] {
  const flavors = (output as { flavors?: { name?: unknown; pints_in_stock?: unknown }[] } | null)?.flavors ?? [];
  return flavors.map((f) => `${String(f.name)}: ${String(f.pints_in_stock)} pints`);
}

function lastSentence(text: string): string {
  return shorten(sentencesOf(text.split('\n')).at(-1) ?? text, 1000);
}

/** Whether the run passes something on to the shop: a refund it could not act on, a refused call, a call awaiting approval. */
function passedOn(view: RunView): boolean {
  if (
    REFUND_WORD.test(view.text) &&
    !view.calls.has('process_refund') &&
    !view.calls.has('approve_request') &&
    !view.calls.has('deny_request') &&
    !view.instruction
  )
    return true;
  return [...view.calls.values()].some((r) => r?.status === 'denied' || r?.status === 'pending_approval');
}

function reply(view: RunView, request: AgentStepRequest): string {
  const lines: string[] = [];
  const name = (id: string) => request.tools.find((t: AgentToolSpec) => t.id === id)?.display_name ?? id.replace(/_/g, ' ');
  for (const [tool, result] of view.calls) {
    if (!result) continue;
    if (result.status === 'denied')
      lines.push(
        tool === 'process_refund'
          ? "I can't issue that refund from this message; the shop decides refunds."
          : `I'm not able to use ${name(tool)} for this message.`,
      );
    else if (result.status === 'pending_approval') lines.push(pendingLine(tool, result.output));
    else if (result.status === 'failure') lines.push(`I couldn't complete ${name(tool)}: ${result.error ?? 'it failed'}.`);
    else lines.push(...successLines(tool, result.output));
  }
  const decidedNow = view.calls.has('approve_request') || view.calls.has('deny_request');
  const decidable = request.decidable ?? [];
  if (decidable.length > 0 && !decidedNow && mixedIntent(view.text)) {
    lines.push('Your message both approves and refuses, so I decided nothing. Please say which: approved, or not approved.');
  }
  const undecided =
    decidable.length > 1 && !view.calls.has('approve_request') && !view.calls.has('deny_request') && PROCESS_INTENT.test(view.text);
  if (undecided) {
    lines.push('Several requests are waiting for approval in this thread, so I decided none of them. Please say which one:');
    for (const r of decidable)
      lines.push(`- request ${r.id}: ${r.tool} ${JSON.stringify(r.input ?? {})}, asked by ${r.requested_by ?? 'a scheduled run'}`);
  }
  const order = orderOf(view);
  const granted = request.tools.some((t) => t.id === 'process_refund' && !t.needs_approval);
  if (
    order &&
    granted &&
    PROCESS_INTENT.test(view.text) &&
    !view.calls.has('process_refund') &&
    !decidedNow &&
    refundedBefore(view.history, order)
  ) {
    lines.push(`Order ${order} was already refunded in this thread, so I did not refund it again.`);
  }
  const refundAsked =
    REFUND_WORD.test(view.text) &&
    !view.calls.has('process_refund') &&
    !view.calls.has('approve_request') &&
    !view.calls.has('deny_request') &&
    !undecided;
  if (refundAsked) lines.push("I've passed your refund request to the shop, who will confirm.");
  if (lines.length === 0)
    lines.push(view.instruction ? 'Nothing needed doing.' : 'Thanks for your message. I will get back to you shortly.');
  const greeting = view.instruction ? [] : [`Hi ${senderOf(view.from ?? '').firstName ?? 'there'},`, ''];
  return [...greeting, ...lines, '', `— ${request.context.agentName}`].join('\n');
}

function pendingLine(tool: string, output: unknown): string {
  const id = String((output as { request_id?: unknown } | null)?.request_id ?? '?');
  return tool === 'process_refund'
    ? `Your refund needs the shop's approval: I've asked for it (request ${id}), and it is issued once approved.`
    : `${tool.replace(/_/g, ' ')} needs approval: I've asked for it (request ${id}).`;
}

function successLines(tool: string, output: unknown): string[] {
  const o = (output ?? {}) as Record<string, unknown>;
  switch (tool) {
    case 'approve_request': {
      const result = o.result as { status?: string; output?: unknown } | undefined;
      return [
        `Request ${String(o.request_id)} approved.`,
        ...(result?.status === 'success' ? successLines(String(o.tool), result.output) : []),
      ];
    }
    case 'deny_request':
      return [`Request ${String(o.request_id)} denied: it will not run.`];
    case 'lookup_order':
      return o.found === false
        ? [`I couldn't find order ${String(o.order_id)}.`]
        : [`Order ${String(o.id)} (${String(o.flavor)}) is ${String(o.status)}.`];
    case 'process_refund':
      return o.refunded === true
        ? [`Order ${String(o.order_id)} has been refunded in full.`]
        : [`Order ${String(o.order_id)} was not refunded: ${String(o.reason ?? 'no reason given')}.`];
    case 'check_flavor_stock':
      return ['In stock:', ...stockLines(output)];
    case 'send_email':
      return [`I sent it to ${String(o.to)}.`];
    case 'document_search': {
      const top = (o.results as { snippet?: unknown }[] | undefined)?.[0]?.snippet;
      return top ? [String(top)] : ["I couldn't find that in our documents."];
    }
    default:
      return [`Done: ${tool}.`];
  }
}
