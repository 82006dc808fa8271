// The local model's agent steps: a small rule-based planner, offline and deterministic, good enough
// to replay the seed's scenario. It reads the message at hand (and the thread for an order it is
// about) and names tools the way a language model would: through the run loop, one call at a time,
// so every call is checked at dispatch like any model's.
//
// Like a real model that saw a tool succeed earlier in the thread, it will try that tool again
// when the message asks for it, even when this run was not offered it: the run loop refuses it at
// dispatch and gives the refusal back, which is the backstop the seed describes.
//
// Rules, in order, each at most once per run:
// - an approval or a "process it" about an order → process_refund {order_id}
// - an order id in the message → lookup_order {order_id}
// - a question about stock or flavors, or a stock report instruction → check_flavor_stock {}
// - an instruction to send (a report) to an address → send_email {to, subject, body}
// - a question, with document_search offered → document_search {query}
// Then the reply, written from what the run's tool calls gave back.
import type { AgentStepRequest, AgentStepResult, AgentToolSpec, AgentTurn } from '../agent-step';
import { ownText, sentencesOf } from './email-text';
import { senderOf } from './sender';
import { shorten } from './shorten';

const ORDER_ID = /\bSCP-\d{1,8}\b/i;
const PROCESS_INTENT = /\b(approved?|approve|process (it|this|that|them|the refund|another( one)?)|go ahead|refund (it|this|that|them))\b/i;
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
  const next = plan(view, offeredOrSeen).find((call) => !view.calls.has(call.tool));
  if (next) {
    return { kind: 'tool_calls', calls: [{ call_id: `local_${request.turns.length}`, tool: next.tool, arguments: JSON.stringify(next.input) }] };
  }
  return { kind: 'reply', text: reply(view, request) };
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
    return { text: [subject ?? '', ...ownText(body)].join('\n'), from, instruction: false, history: turns.slice(0, Math.max(at, 0)), calls };
  }
  return { text: current?.role === 'instruction' ? current.text : '', from: null, instruction: true, history: turns.slice(0, Math.max(at, 0)), calls };
}

/** The tools a call earlier in the thread used successfully: what a model would echo. */
function succeededBefore(history: readonly AgentTurn[]): string[] {
  return history.flatMap((turn) => (turn.role === 'tool_result' && turn.status === 'success' ? [turn.tool] : []));
}

/** The order the message is about: named in it, else the last one the thread named. */
function orderOf(view: RunView): string | null {
  const named = ORDER_ID.exec(view.text)?.[0];
  if (named) return named.toUpperCase();
  for (const turn of [...view.history].reverse()) {
    const text = turn.role === 'inbound' ? `${turn.message.subject ?? ''} ${turn.message.body}` : turn.role === 'tool_call' ? turn.arguments : turn.role === 'reply' || turn.role === 'instruction' ? turn.text : '';
    const found = ORDER_ID.exec(text)?.[0];
    if (found) return found.toUpperCase();
  }
  return null;
}

function plan(view: RunView, known: ReadonlySet<string>): PlannedCall[] {
  const calls: PlannedCall[] = [];
  const order = orderOf(view);
  const namesOrder = ORDER_ID.test(view.text);
  if (order && PROCESS_INTENT.test(view.text) && known.has('process_refund')) calls.push({ tool: 'process_refund', input: { order_id: order } });
  if (order && namesOrder && known.has('lookup_order')) calls.push({ tool: 'lookup_order', input: { order_id: order } });
  if (STOCK_INTENT.test(view.text) && known.has('check_flavor_stock')) calls.push({ tool: 'check_flavor_stock', input: {} });
  const to = view.instruction ? SEND_TO.exec(view.text)?.[1] : undefined;
  if (to && known.has('send_email')) calls.push({ tool: 'send_email', input: { to, subject: subjectOf(view.text), body: reportBody(view) } });
  if (QUESTION.test(view.text.trim()) && known.has('document_search')) calls.push({ tool: 'document_search', input: { query: lastSentence(view.text) } });
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

function reply(view: RunView, request: AgentStepRequest): string {
  const lines: string[] = [];
  const name = (id: string) => request.tools.find((t: AgentToolSpec) => t.id === id)?.display_name ?? id.replace(/_/g, ' ');
  for (const [tool, result] of view.calls) {
    if (!result) continue;
    if (result.status === 'denied') lines.push(tool === 'process_refund' ? "I can't issue that refund from this message; the shop decides refunds." : `I'm not able to use ${name(tool)} for this message.`);
    else if (result.status === 'failure') lines.push(`I couldn't complete ${name(tool)}: ${result.error ?? 'it failed'}.`);
    else lines.push(...successLines(tool, result.output));
  }
  const refundAsked = REFUND_WORD.test(view.text) && !view.calls.has('process_refund');
  if (refundAsked) lines.push("I've passed your refund request to the shop, who will confirm.");
  if (lines.length === 0) lines.push(view.instruction ? 'Nothing needed doing.' : 'Thanks for your message. I will get back to you shortly.');
  const greeting = view.instruction ? [] : [`Hi ${senderOf(view.from ?? '').firstName ?? 'there'},`, ''];
  return [...greeting, ...lines, '', `— ${request.context.agentName}`].join('\n');
}

function successLines(tool: string, output: unknown): string[] {
  const o = (output ?? {}) as Record<string, unknown>;
  switch (tool) {
    case 'lookup_order':
      return o.found === false ? [`I couldn't find order ${String(o.order_id)}.`] : [`Order ${String(o.id)} (${String(o.flavor)}) is ${String(o.status)}.`];
    case 'process_refund':
      return o.refunded === true ? [`Order ${String(o.order_id)} has been refunded in full.`] : [`Order ${String(o.order_id)} was not refunded: ${String(o.reason ?? 'no reason given')}.`];
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
