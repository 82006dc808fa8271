// Compiled, never run (call-tool-types.test.ts): what a host writes with run.callTool(), which must
// type-check under strict. Every annotation below is a claim about the types the call gives.
import type { Request } from 'express';
import { z } from 'zod';
import { currentRun, defineTool, type CallOutcome, type ToolOutcome } from '../../src/index';

export const weighParcel = defineTool({
  id: 'weigh_parcel',
  display_name: 'Weigh parcel',
  summary: 'Weighs a parcel.',
  input: z.object({ weight_kg: z.number(), note: z.string().optional() }),
  execute: async ({ weight_kg }) => ({ grams: weight_kg * 1000, heavy: weight_kg > 20 }),
});

// A tool that answers at once, and one whose schema fills a default: the input is what the caller
// may send (the schema's input), the output what execute returns.
export const countWords = defineTool({
  id: 'count_words',
  display_name: 'Count words',
  summary: 'Counts the words of a text.',
  input: z.object({ text: z.string(), min: z.number().default(1) }),
  execute: ({ text, min }) => Math.max(min, text.split(/\s+/).length),
});

export async function hostRoute(req: Request): Promise<number | null> {
  const run = currentRun(req);
  const weighed = await run.callTool(weighParcel, { weight_kg: 2 });
  if (weighed.status === 'success') {
    const grams: number = weighed.output.grams;
    const heavy: boolean = weighed.output.heavy;
    return heavy ? grams : 0;
  }
  if (weighed.status === 'failure') {
    // For the host's own log and error: the thrown value, and the tool's own words.
    const thrown: unknown = weighed.thrown;
    const words: string = weighed.error;
    void [thrown, words];
    return null;
  }
  const requestId: number = weighed.request.id;
  void requestId;

  const counted = await run.callTool(countWords, { text: 'one two' }, { inputAt: ['body', 'message'] });
  const count: number | null = counted.status === 'success' ? counted.output : null;
  return count;
}

/** By id, as a model harness calls: the same outcomes, with the output unknown. */
export async function byId(req: Request): Promise<unknown> {
  const outcome: CallOutcome = await currentRun(req).callTool('weigh_parcel', { weight_kg: 'anything goes here' });
  const asBefore: ToolOutcome<unknown> | Extract<CallOutcome, { status: 'pending_approval' }> = outcome;
  return asBefore.status === 'success' ? asBefore.output : undefined;
}
