// Compiled, never run (call-tool-types.test.ts): what run.callTool() must refuse to compile. Each
// line under a @ts-expect-error is an error; the test also compiles this file without the
// directives and checks that the errors fall on exactly those lines.
import type { Request } from 'express';
import { currentRun } from '../../src/index';
import { weighParcel } from './call-tool.typed';

export async function misuse(req: Request): Promise<void> {
  const run = currentRun(req);
  // @ts-expect-error the input's field is a number
  await run.callTool(weighParcel, { weight_kg: '2' });
  // @ts-expect-error the input lacks a required field
  await run.callTool(weighParcel, { note: 'fragile' });
  // @ts-expect-error the input names a field the schema does not have
  await run.callTool(weighParcel, { weight_kg: 2, weight_lb: 4 });

  const weighed = await run.callTool(weighParcel, { weight_kg: 2 });
  // @ts-expect-error the output is not there before the outcome is known to be a success
  void weighed.output;
  if (weighed.status === 'success') {
    // @ts-expect-error the output is typed: grams is a number
    const grams: string = weighed.output.grams;
    // @ts-expect-error the output has no field the tool does not return
    void weighed.output.kilograms;
    void grams;
  }
  if (weighed.status === 'failure') {
    // @ts-expect-error a failure has no output
    void weighed.output;
  }

  const byId = await run.callTool('weigh_parcel', { weight_kg: 2 });
  if (byId.status === 'success') {
    // @ts-expect-error by id the output is unknown (TS18046): the host names the tool's value to have it typed
    void byId.output.grams;
  }
}
