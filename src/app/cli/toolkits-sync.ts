// `npm run toolkits:sync`: brings the schema up to date and syncs the system toolkits (All Tools,
// Default Tools). Idempotent; run it on every deploy. `--json` prints the report as JSON.
import { parseArgs } from 'node:util';
import { openService } from '../bootstrap';
import { readConfig } from '../config';
import { createLogger } from '../logger';
import { runCli } from './run-cli';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { json: { type: 'boolean', default: false } } });
  const config = readConfig();
  const opened = await openService(config, createLogger(false));
  try {
    const report = opened.sync;
    if (values.json) {
      console.log(JSON.stringify(report, null, 2));
      return;
    }
    console.log(`All Tools (id ${report.all_tools.id}): ${report.all_tools.member_tool_ids.join(', ')}`);
    if (report.all_tools_added.length) console.log(`  added: ${report.all_tools_added.join(', ')}`);
    if (report.all_tools_removed.length) console.log(`  removed (no longer registered): ${report.all_tools_removed.join(', ')}`);
    console.log(`Default Tools (id ${report.default_tools.id}): ${report.default_tools.member_tool_ids.join(', ') || '(empty)'}`);
    if (report.stale_skipped.length) console.log(`  stale members, skipped at resolution: ${report.stale_skipped.join(', ')}`);
    console.log(report.created.length ? `created: ${report.created.join(', ')}` : 'nothing created: both system toolkits already existed');
  } finally {
    await opened.close();
  }
}

runCli('toolkits:sync', main);
