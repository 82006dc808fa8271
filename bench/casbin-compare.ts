// The compiled policy against node-casbin on the same grants. Casbin's effect is global while
// toolgate's gates are per attachment, so the grants are chosen to mean the same in both: allow-list
// attachments (each allow rule a casbin allow line per member tool), open attachments (`*`), and
// block-list attachments whose tools no other attachment carries (each deny rule a casbin deny line).
// Both are asked the same (sender key, tool) questions; the decisions are compared on the sample
// before anything is timed. Then the routing key's cost per call. Prints; never passes or fails.
import { newEnforcer, newModelFromString, StringAdapter } from 'casbin';
import { compilePolicy } from '../src/core/policy-index';
import { parsedRoutingKey, routingKeyOf } from '../src/core/routing-key';
import type { AgentPolicyData, AttachmentPolicy, Run } from '../src/core/types';

const MODEL = `
[request_definition]
r = sub, obj
[policy_definition]
p = sub, obj, eft
[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))
[matchers]
m = globMatch(r.sub, p.sub) && r.obj == p.obj
`;

const TOOLS = Array.from({ length: 20 }, (_, i) => `tool_${i}`);

function grants(): AgentPolicyData {
  const attachments: AttachmentPolicy[] = [];
  for (let a = 0; a < 10; a++) {
    const kind = a < 6 ? 'allow-list' : a < 8 ? 'open' : 'block-list';
    // Block-list attachments carry tools of their own (16..19), so a global deny means the same.
    const members = kind === 'block-list' ? [TOOLS[16 + (a - 8) * 2]!, TOOLS[17 + (a - 8) * 2]!] : [TOOLS[a]!, TOOLS[(a + 5) % 16]!];
    const rules =
      kind === 'allow-list'
        ? [`user${a}@acme.com`, `*@partner${a}.com`, `boss@dept${a}.thescoop.com`, `*@team${a}.thescoop.com`, `ops${a}@thescoop.com`].map(
            (pattern, j) => ({ id: a * 10 + j, kind: 'allow' as const, pattern }),
          )
        : kind === 'block-list'
          ? [`blocked${a}@thescoop.com`, `*@spam${a}.example`].map((pattern, j) => ({ id: a * 10 + j, kind: 'deny' as const, pattern }))
          : [];
    attachments.push({
      attachment_id: a + 1,
      toolkit_id: a + 1,
      toolkit_name: `Kit ${a}`,
      allow_proactive: false,
      member_tool_ids: members,
      rules,
    });
  }
  return { agent_id: 1, attachments };
}

function casbinLines(data: AgentPolicyData): string {
  const lines: string[] = [];
  for (const a of data.attachments) {
    for (const tool of a.member_tool_ids) {
      if (a.rules.length === 0) lines.push(`p, *, ${tool}, allow`);
      else if (a.rules.every((r) => r.kind === 'deny')) {
        lines.push(`p, *, ${tool}, allow`);
        for (const r of a.rules) lines.push(`p, ${r.pattern}, ${tool}, deny`);
      } else for (const r of a.rules) lines.push(`p, ${r.pattern}, ${tool}, allow`);
    }
  }
  return lines.join('\n');
}

const SENDERS = Array.from({ length: 10 }, (_, a) => [
  `user${a}@acme.com`,
  `x@partner${a}.com`,
  `boss@dept${a}.thescoop.com`,
  `ann@team${a}.thescoop.com`,
  `blocked${a}@thescoop.com`,
  `y@spam${a}.example`,
  `stranger${a}@elsewhere.org`,
]).flat();

function rate(label: string, work: (i: number) => number, ms = 1500): number {
  let sink = 0;
  for (let i = 0; i < 20_000; i++) sink += work(i);
  let calls = 0;
  const start = process.hrtime.bigint();
  const stop = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < stop) {
    for (let i = 0; i < 500; i++) sink += work(calls + i);
    calls += 500;
    now = process.hrtime.bigint();
  }
  const perSecond = calls / (Number(now - start) / 1e9);
  console.log(
    `  ${label.padEnd(46)} ${Math.round(perSecond).toLocaleString('en-US').padStart(12)} /s  ${(1e9 / perSecond).toFixed(0).padStart(7)} ns each${sink === -1 ? '!' : ''}`,
  );
  return perSecond;
}

export async function benchCasbin(): Promise<void> {
  const data = grants();
  const policy = compilePolicy(data, new Set(TOOLS));
  const enforcer = await newEnforcer(newModelFromString(MODEL), new StringAdapter(casbinLines(data)));
  const questions = SENDERS.flatMap((s) => TOOLS.map((tool) => ({ key: routingKeyOf(s)!, tool })));
  const run = (key: string): Run => ({ kind: 'sender', routing_key: key });
  let same = 0;
  for (const q of questions) if (policy.offers(run(q.key), q.tool) === enforcer.enforceSync(q.key, q.tool)) same += 1;
  const granted = questions.filter((q) => policy.offers(run(q.key), q.tool)).length;
  console.log(
    `compiled policy vs node-casbin on the same grants (10 attachments, 34 rules, ${TOOLS.length} tools; ${questions.length} questions, ${granted} granted): ${same} of ${questions.length} decisions agree`,
  );
  const runs = questions.map((q) => run(q.key));
  const ours = rate('toolgate compiled offers(run, tool)', (i) =>
    policy.offers(runs[i % runs.length]!, questions[i % questions.length]!.tool) ? 1 : 0,
  );
  const theirs = rate(
    'node-casbin enforceSync(sub, obj)',
    (i) => (enforcer.enforceSync(questions[i % questions.length]!.key, questions[i % questions.length]!.tool) ? 1 : 0),
    3000,
  );
  console.log(`  the compiled check is ${(ours / theirs).toFixed(0)}× node-casbin's`);
  const senders = ['jane@acme.com', 'Mara+billing@TheScoop.com', 'Mara <mara+billing@thescoop.com>', 'first.last@sub.example.org'];
  console.log('routing key per call:');
  const fast = rate('routingKeyOf, plain addresses (fast path)', (i) => routingKeyOf(senders[i % senders.length])?.length ?? 0);
  const full = rate('the RFC 5322 parser path, same addresses', (i) => parsedRoutingKey(senders[i % senders.length]!)?.length ?? 0, 1000);
  const quoted = ['"Jane Doe" <jane@acme.com>', '"Doe, Jane" <jane+x@acme.com>'];
  rate('routingKeyOf, quoted names ("Doe, Jane" <...>)', (i) => routingKeyOf(quoted[i % quoted.length])?.length ?? 0, 1000);
  rate(
    'routingKeyOf, non-plain ("J. Doe" <a@bücher.de>)',
    (i) => routingKeyOf(i % 2 ? '"J. Doe" <a@bücher.de>' : 'a@b.com.')?.length ?? 0,
    1000,
  );
  console.log(`  the fast path is ${(fast / full).toFixed(0)}× the parser's path on plain addresses`);
}

if (require.main === module) {
  benchCasbin().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
