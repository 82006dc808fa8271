// `npm run bench`: every benchmark, printed side by side in one run. Benchmarks print figures; they
// never pass or fail. Each uses DATABASE_URL when set, else a throwaway embedded PostgreSQL.
import os from 'node:os';
import { benchCasbin } from './casbin-compare';
import { benchGateThroughput } from './gate-throughput';
import { benchPolicy } from './policy';
import { benchRequireTool } from './require-tool';
import { benchResolutionScale } from './resolution-scale';
import { benchRevocation } from './revocation-latency';
import { benchWarmGate } from './warm-gate';

async function main(): Promise<void> {
  console.log(`machine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GB, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; node ${process.version}\n`);
  for (const bench of [benchPolicy, benchCasbin, benchWarmGate, benchGateThroughput, benchResolutionScale, benchRevocation, benchRequireTool]) {
    await bench();
    console.log('');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
