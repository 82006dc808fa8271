// What the dashboard's preview tests share: an agent with an open toolkit and one recorded call to
// preview against, the state a preview must leave as it was, and the preview's part of a page.
import { QueryTypes } from 'sequelize';
import { TOOLGATE_TABLES } from '../../src/db/toolgate-tables';
import type { TestApp } from '../support/app';
import { makeAgent, makeToolkit } from '../support/factories';

export interface Desk {
  /** The agent's name, which its toolkit shares. */
  name: string;
  agent: number;
  kit: number;
  attachment: number;
  page: string;
  /** Jane's lookup_order call, recorded under the open gate. */
  janeCall: number;
}

let made = 0;

/** An agent holding an open toolkit of lookup_order and check_flavor_stock, and Jane's recorded lookup; both named `<prefix> <n>`. */
export async function desk(t: TestApp, prefix: string): Promise<Desk> {
  made += 1;
  const name = `${prefix} ${made}`;
  const kit = await makeToolkit(t, name, ['lookup_order', 'check_flavor_stock']);
  const agent = await makeAgent(t, { name, toolkit_ids: [] });
  const attachment = (await t.admin().post(`/api/agents/${agent}/toolkits`).send({ toolkit_id: kit }).expect(201)).body.id as number;
  await t
    .client()
    .post(`/api/agents/${agent}/tool-calls`)
    .send({ tool: 'lookup_order', input: { order_id: 'SCP-1042' }, sender: 'jane@acme.com' })
    .expect(200);
  const [row] = await t.sequelize.query<{ id: string }>('SELECT max(id) AS id FROM tool_calls WHERE agent_id = :agent', {
    replacements: { agent },
    type: QueryTypes.SELECT,
  });
  return { name, agent, kit, attachment, page: `/admin/agents/${agent}/toolkits/${attachment}`, janeCall: Number(row!.id) };
}

/** Every table's row count and every agent's policy version. */
export async function state(t: TestApp) {
  const counts: Record<string, number> = {};
  for (const { name } of TOOLGATE_TABLES) {
    const [row] = await t.sequelize.query<{ n: string }>(`SELECT count(*) AS n FROM ${name}`, { type: QueryTypes.SELECT });
    counts[name] = Number(row!.n);
  }
  const versions = await t.sequelize.query('SELECT id, toolgate_policy_version(id) AS version FROM agents ORDER BY id', {
    type: QueryTypes.SELECT,
  });
  return { counts, versions };
}

export const previewSection = (html: string) => /<section class="preview" id="preview"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
