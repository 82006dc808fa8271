// Test data through the admin API, one call per thing: a toolkit, an agent, an attachment. Each
// expects its 201 and returns the id (or the attachment as answered), so a test's setup reads as
// what it builds.
import type { TestApp } from './app';

type Admin = Pick<TestApp, 'admin'>;

/** A toolkit of these members; its id. */
export async function makeToolkit(t: Admin, name: string, members: readonly string[]): Promise<number> {
  return (await t.admin().post('/api/toolkits').send({ name, member_tool_ids: members }).expect(201)).body.id as number;
}

/** An agent with these fields (name, toolkit_ids, enabled_tools, escalation_address, ...); its id. */
export async function makeAgent(t: Admin, fields: Record<string, unknown>): Promise<number> {
  return (await t.admin().post('/api/agents').send(fields).expect(201)).body.id as number;
}
