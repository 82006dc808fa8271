// The local model's agent steps: a small rule-based planner, offline and deterministic, good enough
// to replay the seed's scenario. It reads the message at hand (and the thread for an order it is
// about) and names tools the way a language model would: through the run loop, one call at a time,
// so every call is checked at dispatch like any model's.
//
// Like a real model that saw a tool succeed earlier in the thread, it will try that tool again
// when the message asks for it, even when this run was not offered it: the run loop refuses it at
// dispatch and gives the refusal back, which is the backstop the seed describes.
//
// An order is the one the sender names in their own words, else the one participants named in
// their own words earlier in the thread (SEMANTICS §11): never one from a Subject (the requester
// chose it, and a reply repeats it), a reply, a tool call, quoted history or a signature. When they
// name several, it asks which rather than guess (SEMANTICS §12a).
//
// Approval decisions are not the planner's (SEMANTICS §12a): toolgate read the message before the
// run and says what it decided in a `decision` turn, which the reply reports; a message that came
// with one is never read as an instruction to act ("Approved" decided, or decided nothing).
//
// Rules, in order, each at most once per run:
// - an approval or a "process it" about an order, from a message toolgate did not read decisions
//   in → process_refund {order_id}; but not when this run may refund and the thread shows that order
//   refunded already (a careful model does not repeat an action: it says it was done). A run that
//   may not refund still tries, and is refused.
// - a refund asked for an order, when this run may only request process_refund → process_refund
//   {order_id}: the call is filed for the shop's approval
// - an order id in the message → lookup_order {order_id}
// - a question about stock or flavors, or a stock report instruction → check_flavor_stock {}
// - an instruction to send (a report) to an address → send_email {to, subject, body}
// - a question, with document_search offered → document_search {query}
// Then the reply, written from what the run's tool calls gave back and what toolgate decided; it
// asks to copy the agent's escalation address when it passes a request on to the shop.
import type { RunDecisions } from '../../core/run-decisions';
import type { AgentStepRequest, AgentStepResult, AgentToolSpec, AgentTurn } from '../agent-step';
import { ownText, sentencesOf } from './email-text';
import { senderOf } from './sender';
import { shorten } from './shorten';

const ORDER_IDS = /\bSCP-\d{1,8}\b/gi;
const PROCESS_INTENT = /\b(approved?|approve|process (it|this|that|them|the refund|another( one)?)|go ahead|refund (it|this|that|them))\b/i;
const REFUSE_INTENT = /\b(not approved|denied|deny|rejected|reject|declined?|refused?)\b/i;
const REFUSE_WORDS = new RegExp(REFUSE_INTENT.source, 'gi');
const REFUND_WORD = /\brefund/i;
const STOCK_INTENT = /\b(in stock|stock|pints?|flavou?rs?)\b/i;
const SEND_VERB = /\b(?:send|email|mail)\b/gi;
const TO_WORD = /\bto\s+/gi;
// What ends an address written after "to": a space, a list's separator, a bracket.
const ADDRESS_END = /[\s,;<>()]/;
const SPACE = /\s/;
const QUESTION = /\?\s*$/;

interface PlannedCall {
  tool: string;
  input: Record<string, unknown>;
}

interface RunView {
  /** The message at hand: the sender's own words in an inbound message's body, or the instruction. */
  text: string;
  from: string | null;
  instruction: boolean;
  /** The turns before the message at hand: the thread's history. */
  history: readonly AgentTurn[];
  /** This run's calls and results so far, by tool. */
  calls: Map<string, Extract<AgentTurn, { role: 'tool_result' }> | null>;
  /** What toolgate decided of the thread's approval requests from the message at hand; null when it read none. */
  decision: RunDecisions | null;
}

/** The order a message is about: the one named, several (ask which), or none. */
type OrderReading = { order: string } | { several: string[] } | null;

export function planAgentStep(request: AgentStepRequest): AgentStepResult {
  const view = viewOf(request.turns);
  const offeredOrSeen = new Set([...request.tools.map((t) => t.id), ...succeededBefore(view.history)]);
  const requestable = new Set(request.tools.filter((t) => t.needs_approval).map((t) => t.id));
  const granted = new Set(request.tools.filter((t) => !t.needs_approval).map((t) => t.id));
  const next = plan(view, offeredOrSeen, granted, requestable).find((call) => !view.calls.has(call.tool));
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
  let decision: RunDecisions | null = null;
  for (const turn of turns.slice(at + 1)) {
    if (turn.role === 'decision') decision = { decided: turn.decided, undecided: turn.undecided };
    if (turn.role === 'tool_call' && !calls.has(turn.tool)) calls.set(turn.tool, null);
    if (turn.role === 'tool_result') calls.set(turn.tool, turn);
  }
  const history = turns.slice(0, Math.max(at, 0));
  if (current?.role === 'inbound') {
    // What the sender wrote: quoted history and signatures name orders and ask questions too, and
    // the Subject is the thread's, which the requester chose.
    return { text: ownText(current.message.body).join('\n'), from: current.message.from, instruction: false, history, calls, decision };
  }
  return { text: current?.role === 'instruction' ? current.text : '', from: null, instruction: true, history, calls, decision };
}

/** The tools a call earlier in the thread used successfully: what a model would echo. */
function succeededBefore(history: readonly AgentTurn[]): string[] {
  return history.flatMap((turn) => (turn.role === 'tool_result' && turn.status === 'success' ? [turn.tool] : []));
}

/** Whether the text approves and refuses at once: an approval word left once the refusals are taken out. */
function mixedIntent(text: string): boolean {
  return REFUSE_INTENT.test(text) && PROCESS_INTENT.test(text.replace(REFUSE_WORDS, ' '));
}

/** Whether a refund of the order succeeded earlier in the thread: called directly, or as an approved request. */
function refundedBefore(history: readonly AgentTurn[], order: string): boolean {
  const refunded = (output: unknown) => {
    // History holds results as (possibly cut) JSON text.
    const text = typeof output === 'string' ? output : JSON.stringify(output ?? null);
    return text.includes(`"order_id":"${order}"`) && text.includes('"refunded":true');
  };
  return history.some((turn) => {
    if (turn.role === 'tool_result') return turn.status === 'success' && turn.tool === 'process_refund' && refunded(turn.output);
    if (turn.role === 'decision')
      return turn.decided.some((d) => d.tool === 'process_refund' && d.status === 'approved' && refunded(d.result));
    return false;
  });
}

/** The distinct order ids a text names, in order, upper-cased. */
function ordersIn(text: string): string[] {
  return [...new Set(Array.from(text.matchAll(ORDER_IDS), (m) => m[0].toUpperCase()))];
}

/**
 * The order the message is about: named in the sender's own words, else the one the participants
 * named in their own words earlier in the thread. The history holds only participants' messages;
 * Subjects, replies, tool calls and quoted text never choose an order. Several named: ask.
 */
function orderOf(view: RunView): OrderReading {
  const reading = (orders: string[]): OrderReading => (orders.length === 1 ? { order: orders[0]! } : { several: orders });
  const named = ordersIn(view.text);
  if (named.length > 0) return reading(named);
  const earlier = new Set<string>();
  for (const turn of view.history) {
    if (turn.role === 'inbound') for (const order of ordersIn(ownText(turn.message.body).join('\n'))) earlier.add(order);
  }
  return earlier.size === 0 ? null : reading([...earlier]);
}

function plan(view: RunView, known: ReadonlySet<string>, granted: ReadonlySet<string>, requestable: ReadonlySet<string>): PlannedCall[] {
  const calls: PlannedCall[] = [];
  const reading = orderOf(view);
  const order = reading !== null && 'order' in reading ? reading.order : null;
  const namesOrder = ordersIn(view.text).length > 0;
  // A message that both approves and refuses ("Approved: the courier refused the return") acts on
  // nothing, and one toolgate read for decisions was an approver's to decide, not an instruction.
  const mixed = mixedIntent(view.text);
  const refuses = !mixed && REFUSE_INTENT.test(view.text);
  const approves = !mixed && !refuses && view.decision === null && PROCESS_INTENT.test(view.text);
  const repeats = order !== null && granted.has('process_refund') && refundedBefore(view.history, order);
  if (order && approves && known.has('process_refund') && !repeats) calls.push({ tool: 'process_refund', input: { order_id: order } });
  if (order && view.decision === null && REFUND_WORD.test(view.text) && requestable.has('process_refund'))
    calls.push({ tool: 'process_refund', input: { order_id: order } });
  if (order && namesOrder && known.has('lookup_order')) calls.push({ tool: 'lookup_order', input: { order_id: order } });
  if (STOCK_INTENT.test(view.text) && known.has('check_flavor_stock')) calls.push({ tool: 'check_flavor_stock', input: {} });
  const to = view.instruction ? sendTo(view.text) : undefined;
  if (to && known.has('send_email'))
    calls.push({ tool: 'send_email', input: { to, subject: subjectOf(view.text), body: reportBody(view) } });
  if (QUESTION.test(view.text.trim()) && known.has('document_search'))
    calls.push({ tool: 'document_search', input: { query: lastSentence(view.text) } });
  return calls;
}

/**
 * The address an instruction sends to: "send … to ADDRESS", with no "@" between the verb and "to"
 * (the first such, as `/\b(?:send|email|mail)\b[^@]*?\bto\s+([^\s,;<>()]+@[^\s,;<>()]+?)[.,;]?(?:\s|$)/`
 * finds it). Read in one pass over the verbs and one over the "to"s: that expression retried every
 * verb up to the next "@", and every "@" of a long word, so its cost grew with the square of the text.
 */
function sendTo(text: string): string | undefined {
  SEND_VERB.lastIndex = 0;
  let to: { index: number; address: string } | null = null;
  for (let verb = SEND_VERB.exec(text); verb !== null; verb = SEND_VERB.exec(text)) {
    const from = verb.index + verb[0].length;
    // The first "to ADDRESS" from here; one found for an earlier verb still is, when at or past here.
    if (to === null || to.index < from) {
      to = toAddress(text, from);
      if (to === null) return undefined;
    }
    const at = text.indexOf('@', from);
    if (at === -1 || to.index < at) return to.address;
    // An "@" stands between this verb and every "to": the next verb must come after it.
    SEND_VERB.lastIndex = at;
  }
  return undefined;
}

/**
 * The first "to ADDRESS" at or after `from`, as the expression reads it: the word after "to", ended
 * by a space, the end, or a "," or ";" before one. Its "@" is the last one with something on each
 * side (the greedy part), and a closing dot is left out when something still follows that "@" (the
 * lazy part): "to mara@thescoop.com." is mara@thescoop.com, "to a@b@." keeps its dot.
 */
function toAddress(text: string, from: number): { index: number; address: string } | null {
  const endsHere = (i: number) => i >= text.length || SPACE.test(text[i]!);
  TO_WORD.lastIndex = from;
  for (let to = TO_WORD.exec(text); to !== null; to = TO_WORD.exec(text)) {
    const start = to.index + to[0].length;
    let end = start;
    while (end < text.length && !ADDRESS_END.test(text[end]!)) end++;
    const word = text.slice(start, end);
    const next = text[end];
    const bySpace = endsHere(end);
    if (!bySpace && !((next === ',' || next === ';') && endsHere(end + 1))) continue;
    const at = word.length < 3 ? -1 : word.lastIndexOf('@', word.length - 2);
    if (at < 1) continue;
    const dropDot = bySpace && word.endsWith('.') && at < word.length - 2;
    return { index: to.index, address: dropDot ? word.slice(0, -1) : word };
  }
  return null;
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
  if (REFUND_WORD.test(view.text) && !view.calls.has('process_refund') && view.decision === null && !view.instruction) return true;
  return [...view.calls.values()].some((r) => r?.status === 'denied' || r?.status === 'pending_approval');
}

function reply(view: RunView, request: AgentStepRequest): string {
  const lines: string[] = [];
  const name = (id: string) => request.tools.find((t: AgentToolSpec) => t.id === id)?.display_name ?? id.replace(/_/g, ' ');
  lines.push(...decisionLines(view.decision));
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
  const reading = orderOf(view);
  const acts = view.decision === null && (PROCESS_INTENT.test(view.text) || REFUND_WORD.test(view.text));
  if (reading !== null && 'several' in reading && acts) {
    lines.push(
      `Your message could be about more than one order (${reading.several.join(', ')}), so I did nothing yet: which one do you mean?`,
    );
  }
  const order = reading !== null && 'order' in reading ? reading.order : null;
  const granted = request.tools.some((t) => t.id === 'process_refund' && !t.needs_approval);
  if (
    order &&
    granted &&
    view.decision === null &&
    PROCESS_INTENT.test(view.text) &&
    !view.calls.has('process_refund') &&
    refundedBefore(view.history, order)
  ) {
    lines.push(`Order ${order} was already refunded in this thread, so I did not refund it again.`);
  }
  const several = reading !== null && 'several' in reading;
  const refundAsked = !several && REFUND_WORD.test(view.text) && !view.calls.has('process_refund') && view.decision === null;
  if (refundAsked) lines.push("I've passed your refund request to the shop, who will confirm.");
  if (lines.length === 0)
    lines.push(view.instruction ? 'Nothing needed doing.' : 'Thanks for your message. I will get back to you shortly.');
  const greeting = view.instruction ? [] : [`Hi ${senderOf(view.from ?? '').firstName ?? 'there'},`, ''];
  return [...greeting, ...lines, '', `— ${request.context.agentName}`].join('\n');
}

/**
 * What the reply says of toolgate's decisions, in the agent's words: what an approved call gave, and
 * what is left. toolgate's own closing lines state each decision, so they are not said twice.
 */
function decisionLines(decision: RunDecisions | null): string[] {
  if (decision === null) return [];
  const lines: string[] = [];
  for (const d of decision.decided) {
    if (d.status === 'denied') {
      lines.push(`Understood: ${d.tool.replace(/_/g, ' ')} will not go ahead.`);
      continue;
    }
    const result = d.result;
    if (result?.status === 'success') lines.push(...successLines(d.tool, result.output));
    else if (result?.status === 'failure') lines.push(`It ran and failed: ${result.error}.`);
  }
  if (decision.undecided.length > 0) {
    lines.push(
      decision.undecided.length === 1
        ? 'I decided nothing on the request waiting for your approval: its code, below, decides it.'
        : "Several requests are waiting for approval in this thread, so I decided none of them: each one's code, below, decides it.",
    );
  }
  return lines;
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
