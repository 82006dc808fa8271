// Jest globalTeardown: drops this run's template and per-file databases, stops the embedded server.
import { promises as fs } from 'node:fs';
import { dropRunDatabases, type TestRun } from './database';

const TEST_RUN = Symbol.for('toolgate.testRun'); // set by global-setup.ts in this process

export default async function globalTeardown(): Promise<void> {
  const run = (globalThis as typeof globalThis & { [TEST_RUN]?: TestRun })[TEST_RUN];
  if (!run) return;
  try {
    await dropRunDatabases(run);
  } finally {
    await run.server?.stop();
    if (run.tmpDir) await fs.rm(run.tmpDir, { recursive: true, force: true });
  }
}
