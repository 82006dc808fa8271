// What the model reads of a thread (SEMANTICS §11): its earlier runs as turns, oldest first, within
// a budget of characters, whatever the thread holds. The newest runs are kept first; each text (a
// message, a tool call's arguments or result, a reply) is cut to what is left, with a note of how
// much was cut; a run's tool calls go with their results or not at all, as the model's protocol
// needs them paired. The tools of a run still come from its own sender: history is text, never a grant.
import type { AgentTurn, InboundMessage } from '../llm/agent-step';
import type { RunDecisions } from '../core/run-decisions';
import type { AgentRunView } from './run-store';

/** The most of one tool call's arguments or result that history carries. */
const STEP_CHARS = 1_000;
/** Below this much budget left, an older run is not begun. */
const MIN_RUN_CHARS = 200;

export function historyOf(runs: readonly AgentRunView[], budget: number): AgentTurn[] {
  const itemCap = Math.max(MIN_RUN_CHARS, Math.floor(budget / 4));
  let left = budget;
  const kept: AgentTurn[][] = [];
  for (const past of [...runs].reverse()) {
    if (left < MIN_RUN_CHARS) break;
    const take = (text: string, cap = itemCap) => {
      const cut = cutText(text, Math.min(cap, left));
      left -= cut.length;
      return cut;
    };
    const turns: AgentTurn[] = [];
    if ('instruction' in past.message) {
      turns.push({ role: 'instruction', text: take(withOriginal(past.message.instruction, past.message)) });
    } else {
      const message: InboundMessage = {
        ...past.message,
        body: take(withOriginal(past.message.body, past.message)),
        subject: past.message.subject?.slice(0, 300),
      };
      delete message.original_length;
      turns.push({ role: 'inbound', message });
      // What toolgate decided of it is part of what the thread says happened (a request it approved ran).
      if (past.decisions) turns.push({ role: 'decision', ...boundedDecisions(past.decisions, take) });
    }
    past.steps.forEach((step, i) => {
      if (left < MIN_RUN_CHARS) return;
      const call_id = `run${past.id}_${i}`;
      const args = take(typeof step.input === 'string' ? step.input : JSON.stringify(step.input ?? {}), STEP_CHARS);
      // A result as it was given back, output and error: a call filed for approval keeps its output
      // (the request it became), a decided request that failed its error beside it.
      const result = {
        ...(step.output !== undefined || step.status === 'success'
          ? { output: take(JSON.stringify(step.output ?? null), STEP_CHARS) }
          : {}),
        ...(step.status !== 'success' ? { error: take(step.error ?? '', STEP_CHARS) } : {}),
      };
      turns.push({ role: 'tool_call', call_id, tool: step.tool, arguments: args });
      turns.push({ role: 'tool_result', call_id, tool: step.tool, status: step.status, ...result });
    });
    if (past.reply) turns.push({ role: 'reply', text: take(past.reply.text) });
    kept.push(turns);
  }
  return kept.reverse().flat();
}

/** A run's decisions within the budget: each input and result as the steps' are, at most STEP_CHARS. */
function boundedDecisions(decisions: RunDecisions, take: (text: string, cap?: number) => string): RunDecisions {
  const json = (value: unknown) => {
    const text = JSON.stringify(value ?? null);
    const cut = take(text, STEP_CHARS);
    return cut === text ? value : cut;
  };
  return {
    decided: decisions.decided.map((d) => ({
      ...d,
      input: json(d.input),
      ...(d.result ? { result: json(d.result) as typeof d.result } : {}),
    })),
    undecided: decisions.undecided.map((u) => ({ ...u, input: json(u.input) })),
  };
}

/** Text cut to `max` characters, ending with how much more there was. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const note = `… [${text.length - max} more characters not shown]`;
  return text.slice(0, Math.max(0, max - note.length)) + note;
}

/** The text as the database cut it, with the note of its length before when it was cut there. */
function withOriginal(text: string, message: { original_length?: number | undefined }): string {
  const original = message.original_length;
  return original !== undefined && original > text.length ? `${text}… [${original - text.length} more characters not shown]` : text;
}
