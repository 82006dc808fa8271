// Tasks: filed by task_creator from a message's action items, idempotently per (agent, message, title).
//
//   const tasks = new TaskStore(sequelize);
//   const filed = await tasks.createTasksFromActionItems(agentId, analysis.action_items, message, transaction);
//   const all = await tasks.listTasks(agentId);
export { taskItemSchema, taskSourceSchema, type TaskItem, type TaskSource } from './schemas';
export { messageIdOf, taskSourceKey } from './source-key';
export { INITIAL_STATUS, TaskStore, type TaskView } from './task-store';
