// What task_creator files tasks from: the action items of an analysis, and the message they came
// from. zod schemas, so the store's types and any route's parsing agree.
import { z } from 'zod';

export const taskItemSchema = z.object({
  title: z.string(),
  due: z.string().nullish(),
});
export type TaskItem = z.infer<typeof taskItemSchema>;

export const taskSourceSchema = z.object({
  message_id: z.string().nullish(),
  from: z.string(),
  subject: z.string().nullish(),
  body: z.string(),
});
export type TaskSource = z.infer<typeof taskSourceSchema>;
