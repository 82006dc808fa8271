// What the benchmarks that time calls one at a time print of their samples, and the tool they time
// when the tool itself must cost nothing: declared once, so two benchmarks' figures mean the same.
import { z } from 'zod';
import { defineTool } from '../src/tools/tool-registry';

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
}

/** The nearest-rank percentiles of the samples. */
export function percentiles(samples: readonly number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  return { p50: at(50), p95: at(95), p99: at(99) };
}

/** A host tool that does nothing, taking one string field: what the records cost any tool. */
export function noopTool(field: string) {
  return defineTool({
    id: 'bench_noop',
    display_name: 'No-op',
    summary: 'Does nothing.',
    input: z.object({ [field]: z.string() }),
    execute: () => ({}),
  });
}
