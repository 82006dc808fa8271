// The migration jobs the dashboard starts: what a job says when its work fails, and when the work
// is done but its report cannot be written.
import { JobStore } from '../../src/app/dashboard/jobs';
import type { MigrationReport } from '../../src/legacy/report';
import { createTestApp, type TestApp } from '../support/app';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** Starts a job and resolves with it once it has stopped running, with what onUnexpected was told. */
async function runJob(work: () => Promise<MigrationReport>) {
  const store = new JobStore(t.sequelize);
  const unexpected: unknown[] = [];
  const id = await store.start('apply', false, work, (err) => unexpected.push(err));
  for (let i = 0; i < 200; i++) {
    const job = await store.get(id);
    if (job.status !== 'running') return { job, unexpected };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`job ${id} never stopped running`);
}

describe("when a job's work throws", () => {
  test('then the job failed and says nothing was committed', async () => {
    const { job, unexpected } = await runJob(async () => {
      throw new Error('the plan broke');
    });
    expect(job.status).toBe('failed');
    expect(job.error).toContain('nothing was committed');
    expect(unexpected).toHaveLength(1);
  });
});

describe("when a job's work is done but its report cannot be recorded", () => {
  test('then the job says it finished, never that nothing was committed', async () => {
    // A BigInt cannot be written as JSON: the success's own write fails, after the work.
    const { job, unexpected } = await runJob(async () => ({ unwritable: 1n }) as unknown as MigrationReport);
    expect(job.status).toBe('failed');
    expect(job.error).toContain('The job finished');
    expect(job.error).not.toContain('nothing was committed');
    expect(unexpected).toEqual([expect.any(TypeError)]);
  });
});
