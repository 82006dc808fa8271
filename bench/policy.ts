// How fast a compiled policy answers: compile once, then toolsFor (the dispatch check) and the full
// explained resolve, over a mixed stream of runs for an agent with 10 attachments and 50 rules.
// A plain hrtime loop over many calls per sample: per-call timers cannot resolve sub-microsecond work.
import { compilePolicy } from '../src/core/policy-index';
import { type CompiledPolicy } from '../src/core/compiled-policy';
import { parsePattern } from '../src/core/pattern';
import { routingKeyOf } from '../src/core/routing-key';
import type { AgentPolicyData, AttachmentPolicy, GateRule, Run } from '../src/core/types';

const ATTACHMENTS = 10;
const SAMPLES = 7;
const SAMPLE_MS = 200;

// Results are folded in here so the optimizer cannot drop the calls being timed.
let blackhole = 0;

const TOOL_IDS = Array.from({ length: 30 }, (_, i) => `tool_${i}`);
const LIVE = new Set(TOOL_IDS.slice(0, 27));

function pattern(raw: string): string {
  const parsed = parsePattern(raw);
  if (!parsed.ok) throw new Error(`bench pattern ${raw}: ${parsed.reason}`);
  return parsed.pattern;
}

function rulesFor(a: number): GateRule[] {
  // A mix of every pattern shape and both kinds; even attachments are allow-lists, odd block-lists.
  const shapes = [
    `user${a}@acme.com`,
    `*@partner${a}.com`,
    `ops@*.dept${a}.thescoop.com`,
    `blocked${a}@thescoop.com`,
    `*@spam${a}.example`,
  ];
  return shapes.map((raw, j) => ({
    id: a * 100 + j,
    kind: j >= 3 || a % 2 === 1 ? 'deny' : 'allow',
    pattern: pattern(raw),
  }));
}

function buildPolicy(): AgentPolicyData {
  const attachments: AttachmentPolicy[] = Array.from({ length: ATTACHMENTS }, (_, a) => ({
    attachment_id: a + 1,
    toolkit_id: a + 1,
    toolkit_name: `Kit ${a}`,
    allow_proactive: a % 3 === 0,
    member_tool_ids: TOOL_IDS.slice(a * 3, a * 3 + 3 + (a % 4)),
    rules: rulesFor(a),
  }));
  return { agent_id: 1, attachments };
}

function buildRuns(): Run[] {
  const senders = [
    'user2@acme.com', // an exact allow
    'Someone <someone+x@partner4.com>', // a *@domain allow
    'ops@eu.dept6.thescoop.com', // a subdomain allow
    'blocked1@thescoop.com', // a deny
    'x@spam3.example', // a star deny
    'stranger@elsewhere.org', // matches nothing
    'jane@acme.com', // matches nothing
    'not an address', // no routing key
  ];
  const runs: Run[] = senders.map((s) => ({ kind: 'sender', routing_key: routingKeyOf(s) }));
  runs.push({ kind: 'scheduled' });
  return runs;
}

/** Operations per second: the median of several timed samples, each many calls long. */
function measure(label: string, work: (i: number) => number): void {
  let sink = 0;
  for (let i = 0; i < 20_000; i += 1) sink += work(i);
  const rates: number[] = [];
  for (let s = 0; s < SAMPLES; s += 1) {
    let calls = 0;
    const start = process.hrtime.bigint();
    const stop = start + BigInt(SAMPLE_MS) * 1_000_000n;
    let now = start;
    while (now < stop) {
      for (let i = 0; i < 1000; i += 1) sink += work(calls + i);
      calls += 1000;
      now = process.hrtime.bigint();
    }
    rates.push(calls / (Number(now - start) / 1e9));
  }
  rates.sort((x, y) => x - y);
  const median = rates[Math.floor(rates.length / 2)] ?? 0;
  const spread = `${format(rates[0] ?? 0)}–${format(rates[rates.length - 1] ?? 0)}`;
  blackhole += sink;
  console.log(
    `${label.padEnd(34)} ${format(median).padStart(12)} /s  ${(1e9 / median).toFixed(0).padStart(7)} ns each  (samples ${spread})`,
  );
}

function format(rate: number): string {
  return Math.round(rate).toLocaleString('en-US');
}

export async function benchPolicy(): Promise<void> {
  const data = buildPolicy();
  const runs = buildRuns();
  const keyed = runs.filter((r) => r.kind === 'sender' && r.routing_key !== null);
  const rules = data.attachments.reduce((n, a) => n + a.rules.length, 0);
  // The first compile checks every pattern's normal form; later ones reuse that answer.
  const coldStart = process.hrtime.bigint();
  const policy: CompiledPolicy = compilePolicy(data, LIVE);
  const coldMicros = Number(process.hrtime.bigint() - coldStart) / 1000;

  console.log(
    `toolgate policy bench: ${data.attachments.length} attachments, ${rules} rules, ${runs.length} runs (${keyed.length} with a key, 1 without, 1 scheduled); node ${process.version}`,
  );
  console.log(`${'compilePolicy, first (one shot)'.padEnd(34)} ${coldMicros.toFixed(0).padStart(12)} µs`);
  measure('compilePolicy, patterns seen', () => compilePolicy(data, LIVE).agent_id);
  measure('toolsFor, mixed runs', (i) => policy.toolsFor(runs[i % runs.length] as Run).size);
  measure('toolsFor, sender runs with a key', (i) => policy.toolsFor(keyed[i % keyed.length] as Run).size);
  measure('offers, mixed runs', (i) => (policy.offers(runs[i % runs.length] as Run, 'tool_7') ? 1 : 0));
  measure('resolve (explained), mixed runs', (i) => policy.resolve(runs[i % runs.length] as Run).tools.length);
  await Promise.resolve();
  if (blackhole === -1) console.log('unreachable');
}

if (require.main === module) {
  benchPolicy().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
