// The realistic emails under test/fixtures/emails, one JSON file each, checked on load: what a
// message says (from, subject, body, received_at) and what the local analysis must get right.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { emailCategorySchema, prioritySchema, sentimentSchema, type ModelEmail } from '../../src/llm/email-analysis';

const FIXTURE_DIR = join(__dirname, '..', 'fixtures', 'emails');

const fixtureSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9-]+$/),
  note: z.string().optional(),
  from: z.string().min(1),
  subject: z.string(),
  received_at: z.iso.datetime({ offset: true }),
  body: z.string().min(1),
  expect: z.strictObject({
    category: emailCategorySchema.optional(),
    priority: prioritySchema.optional(),
    sentiment: sentimentSchema.optional(),
    /** Each date must be the due date of some action item. */
    due_dates: z.array(z.iso.date()).optional(),
    no_action_items: z.literal(true).optional(),
    no_due_dates: z.literal(true).optional(),
  }),
});
export type EmailFixture = z.infer<typeof fixtureSchema>;

export function loadEmailFixtures(): EmailFixture[] {
  return readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => fixtureSchema.parse(JSON.parse(readFileSync(join(FIXTURE_DIR, f), 'utf8'))));
}

export function fixtureEmail(name: string): ModelEmail & { received_at: Date } {
  const f = loadEmailFixtures().find((x) => x.name === name);
  if (!f) throw new Error(`no email fixture named ${name}`);
  return asEmail(f);
}

export function asEmail(f: EmailFixture): ModelEmail & { received_at: Date } {
  return { from: f.from, subject: f.subject, body: f.body, received_at: new Date(f.received_at) };
}
