// `npm run bench`: every benchmark, printed side by side in one run. Benchmarks print figures; they
// never pass or fail. Each uses DATABASE_URL when set, else a throwaway embedded PostgreSQL. Each
// runs in a process of its own, so none starts from the heap (and the collector's debts) that the
// ones before it left.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';

const BENCHES = [
  'policy',
  'casbin-compare',
  'warm-gate',
  'gate-throughput',
  'resolution-scale',
  'revocation-latency',
  'require-tool',
  'exactly-once',
  'recorded-dispatch',
  'mcp-call',
  'decision-log',
  'spans',
];

function main(): void {
  console.log(
    `machine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GB, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; node ${process.version}\n`,
  );
  for (const bench of BENCHES) {
    const ran = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, `${bench}.ts`)], { stdio: 'inherit' });
    if (ran.status !== 0) {
      console.error(`bench/${bench}.ts exited with ${ran.status ?? ran.signal}`);
      process.exit(1);
    }
    console.log('');
  }
}

main();
