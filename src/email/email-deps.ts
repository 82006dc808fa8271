// What the email use cases need besides the run: the model, task filing, the agent's name and
// prompt for the model's context, and the clock.
import type { LanguageModel, ModelContext } from '../llm/language-model';
import type { AgentView } from '../services/agents';
import type { TaskStore } from '../tasks/task-store';

export interface EmailDeps {
  model: LanguageModel;
  tasks: TaskStore;
  now: () => Date;
}

export function modelContext(agent: AgentView, now: Date): ModelContext {
  return { agentName: agent.name, systemPrompt: agent.system_prompt, now };
}
