// Who is asking a model, and when: the agent's name signs replies, its prompt steers, `now` anchors
// relative dates.

/** Who is asking, and when: `now` is the reference for relative dates when a message has none. */
export interface ModelContext {
  agentName: string;
  systemPrompt: string | null;
  now: Date;
}

/** The context a model call runs in, for an agent (its name signs replies, its prompt steers). */
export function modelContext(agent: { name: string; system_prompt: string | null }, now: Date): ModelContext {
  return { agentName: agent.name, systemPrompt: agent.system_prompt, now };
}
