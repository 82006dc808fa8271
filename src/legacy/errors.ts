// Why an enabled_tools migration stopped. Each carries the report so far, so the CLI and the admin
// route can show what was found; nothing was committed when one is thrown.
import { HttpError } from '../errors';
import type { MigrationReport } from './report';

/** The check inside the apply found an agent whose new access differs from its legacy access. */
export class ParityMismatchError extends HttpError {
  readonly report: MigrationReport;
  constructor(report: MigrationReport) {
    const first = report.verification.mismatches.slice(0, 3).map((m) => `agent ${m.agent_id}${m.tool_id ? ` / ${m.tool_id}` : ''}: ${m.problem}`);
    super(
      409,
      'parity_mismatch',
      `The enabled_tools migration was rolled back, nothing changed: after applying it, ${report.verification.mismatches.length} check(s) found access that differs from the legacy strings (${first.join('; ')}). The report lists them.`,
      { report },
    );
    this.report = report;
  }
}

/** An apply or undo needs toolgate's tables; a dry run can preview a legacy database without them. */
export class SchemaNotMigratedError extends HttpError {
  constructor() {
    super(409, 'schema_not_migrated', "toolgate's tables are missing: run the schema migrations first (npm run migrate runs them, then this migration).");
  }
}

/** Another writer held the tables longer than the migration waits for them. */
export class MigrationBusyError extends HttpError {
  constructor(seconds: number) {
    super(
      409,
      'migration_busy',
      `The enabled_tools migration waited ${seconds} s for other writers to agents, toolkits or attachments and gave up, nothing changed: retry when they are done.`,
    );
  }
}
