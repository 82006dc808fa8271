// `npm run bench`: the compiled policy's resolutions per second, then what requireTool adds to a
// request. Benchmarks print figures; they never pass or fail.
import { benchPolicy } from './policy';
import { benchRequireTool } from './require-tool';

async function main(): Promise<void> {
  await benchPolicy();
  console.log('');
  await benchRequireTool();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
