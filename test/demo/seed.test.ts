// The demo seed (hostile review, findings 4 and 5): it runs once, never brings back what an operator
// deleted, and ships no refund that a stranger can reach.
import { QueryTypes } from 'sequelize';
import { seedUp } from '../../src/db/migrate';
import { up as seedTheScoop } from '../../seeders/20261130000001-the-scoop';
import { createTestApp, type TestApp } from '../support/app';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(() => t.close());

const agentId = async (name: string) =>
  (
    await t.sequelize.query<{ id: number }>('SELECT id FROM agents WHERE name = :name', { replacements: { name }, type: QueryTypes.SELECT })
  )[0]?.id;
const grants = () =>
  t.sequelize.query<{ agent: string; toolkit: string }>(
    'SELECT a.name AS agent, k.name AS toolkit FROM agent_toolkits at JOIN agents a ON a.id = at.agent_id JOIN toolkits k ON k.id = at.toolkit_id ORDER BY at.id',
    { type: QueryTypes.SELECT },
  );

describe('when the service starts with the demo', () => {
  test('then the first start seeds The Scoop and records each seeder', async () => {
    const seeders = ['20261130000001-the-scoop.ts', '20261130000002-scouts-access-rules.ts', '20261201000001-sundae-copies-the-owner.ts'];
    expect(await seedUp(t.sequelize)).toEqual(seeders);
    expect(await grants()).toEqual([
      { agent: 'Sundae', toolkit: 'Support' },
      { agent: 'Sundae', toolkit: 'Finance' },
      { agent: 'Scout', toolkit: 'Finance' },
      { agent: 'Scout', toolkit: 'Operations' },
    ]);
    const rows = await t.sequelize.query<{ name: string }>('SELECT name FROM "SequelizeData" ORDER BY name', { type: QueryTypes.SELECT });
    expect(rows.map((r) => r.name)).toEqual(seeders);
  });

  test("then Sundae copies the shop's owner when she passes a request on, which makes Mara a participant of the thread", async () => {
    const sundae = await agentId('Sundae');
    expect((await t.admin().get(`/api/agents/${sundae}`).expect(200)).body.escalation_address).toBe('mara@thescoop.com');
  });

  test("then a demo seeded before escalation addresses gets Sundae's on its next start, and an operator's own is kept", async () => {
    const sundae = await agentId('Sundae');
    const reseed = async () => {
      await t.sequelize.query(`DELETE FROM "SequelizeData" WHERE name = '20261201000001-sundae-copies-the-owner.ts'`);
      expect(await seedUp(t.sequelize)).toEqual(['20261201000001-sundae-copies-the-owner.ts']);
      return (await t.admin().get(`/api/agents/${sundae}`).expect(200)).body.escalation_address;
    };
    // Seeded before: no address yet.
    await t.admin().patch(`/api/agents/${sundae}`).send({ escalation_address: null }).expect(204);
    expect(await reseed()).toBe('mara@thescoop.com');
    // An operator's own address stands.
    await t.admin().patch(`/api/agents/${sundae}`).send({ escalation_address: 'owner@thescoop.com' }).expect(204);
    expect(await reseed()).toBe('owner@thescoop.com');
  });

  test('then a stranger who writes to Scout is refused by her access rules before any tool, and the shop is not', async () => {
    const scout = await agentId('Scout');
    const stranger = await t
      .client()
      .post(`/api/agents/${scout}/tool-calls`)
      .send({ tool: 'process_refund', input: { order_id: 'SCP-1050' }, sender: 'jane@acme.com' })
      .expect(403);
    expect(stranger.body.code).toBe('sender_forbidden');
    const view = await t.admin().get(`/api/agents/${scout}/tools`).query({ sender: 'mara@thescoop.com' }).expect(200);
    expect(view.body.tools).toContain('process_refund');
    // As the seed document has it: Scout's access rule, and her Finance attachment open.
    expect((await t.admin().get(`/api/agents/${scout}/access-rules`).expect(200)).body).toEqual([
      expect.objectContaining({ kind: 'allow', pattern: '*@thescoop.com' }),
    ]);
    const finance = view.body.attachments.find((a: { toolkit_name: string }) => a.toolkit_name === 'Finance');
    expect(finance).toMatchObject({ admitted: true, reason: 'no_rules' });
  });

  test("then a demo seeded before access rules existed gets Scout's access rule on its next start, once", async () => {
    const scout = await agentId('Scout');
    await t.sequelize.query('DELETE FROM agent_access_rules WHERE agent_id = :scout', { replacements: { scout } });
    await t.sequelize.query(`DELETE FROM "SequelizeData" WHERE name = '20261130000002-scouts-access-rules.ts'`);
    expect(await seedUp(t.sequelize)).toEqual(['20261130000002-scouts-access-rules.ts']);
    expect((await t.admin().get(`/api/agents/${scout}/access-rules`).expect(200)).body).toEqual([
      expect.objectContaining({ kind: 'allow', pattern: '*@thescoop.com' }),
    ]);
  });

  test('then after an operator deletes a grant, a restart does not bring it back', async () => {
    const sundae = await agentId('Sundae');
    const attachments = (await t.admin().get(`/api/agents/${sundae}/toolkits`).expect(200)).body as {
      id: number;
      toolkit: { name: string };
    }[];
    const finance = attachments.find((a) => a.toolkit.name === 'Finance');
    await t.admin().delete(`/api/agents/${sundae}/toolkits/${finance?.id}`).expect(204);
    expect(await seedUp(t.sequelize)).toEqual([]);
    expect((await grants()).filter((g) => g.agent === 'Sundae').map((g) => g.toolkit)).toEqual(['Support']);
  });

  test('then a database seeded before seeders were recorded is not seeded again', async () => {
    // A deployment whose demo predates the SequelizeData records: the seeder itself finds the demo.
    await t.sequelize.query('DELETE FROM "SequelizeData"');
    await seedTheScoop(t.sequelize.getQueryInterface());
    expect((await grants()).filter((g) => g.agent === 'Sundae').map((g) => g.toolkit)).toEqual(['Support']);
  });
});
