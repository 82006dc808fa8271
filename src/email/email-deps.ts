// What the email use cases need besides the run and the agent: the model, task filing, the clock.
import type { LanguageModel } from '../llm/language-model';
import type { TaskStore } from '../tasks/task-store';

export interface EmailDeps {
  model: LanguageModel;
  tasks: TaskStore;
  now: () => Date;
}
