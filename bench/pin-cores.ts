// Pins a process (all its threads) to a list of cores with `taskset`, where it exists: on a small
// machine, a benchmark's processes that take turns on the same cores measure the scheduler as much
// as the code.
import { spawnSync } from 'node:child_process';

/** Pins `pid` to `cores` ("1", "0-1"); false where taskset is missing or refuses. */
export function pinToCores(pid: number, cores: string): boolean {
  return spawnSync('taskset', ['-a', '-cp', cores, String(pid)], { stdio: 'ignore' }).status === 0;
}
