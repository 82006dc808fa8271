// The agent the benchmarks gate on: 10 attachments and 50 rules of every pattern shape, as in the
// policy benchmark, made through toolgate's own services.
import type { Toolgate } from '../src/toolgate';

export const ADMITTED = ['user0@acme.com', 'x@partner0.com', 'ops@eu.dept0.thescoop.com'];
export const REFUSED = ['x@partner2.com', 'someone@else.org', 'blocked0@thescoop.com'];

export async function createBenchAgent(tg: Toolgate, label = 'Bench'): Promise<number> {
  const agent = await tg.agents.create({ name: label, toolkit_ids: [] });
  const ids = tg.tools.map((t) => t.id);
  for (let a = 0; a < 10; a++) {
    const kit = await tg.toolkits.create({
      name: `${label} kit ${a}`,
      member_tool_ids: [ids[a % ids.length]!, ids[(a + 3) % ids.length]!],
    });
    await tg.attachments.attach(agent.id, {
      toolkit_id: kit.id,
      rules: [
        { kind: a % 2 ? 'deny' : 'allow', pattern: `user${a}@acme.com` },
        { kind: 'allow', pattern: `*@partner${a}.com` },
        { kind: 'allow', pattern: `ops@*.dept${a}.thescoop.com` },
        { kind: 'deny', pattern: `blocked${a}@thescoop.com` },
        { kind: 'deny', pattern: `*@spam${a}.example` },
      ],
    });
  }
  const first = (await tg.attachments.list(agent.id))[0]!;
  await tg.toolkits.update(first.toolkit.id, { member_tool_ids: ['email_analyzer'] });
  return agent.id;
}
