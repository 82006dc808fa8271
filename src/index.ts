// toolgate's public surface: the plugin, its middleware factories, the pure core, and the errors.
// Everything a host needs is re-exported here; nothing else is public.
//
//   import { createToolgate, defineTool } from 'toolgate';
//   const tg = createToolgate({ sequelize, adminToken, tools: [lookupOrder] });
//   await tg.migrate(); await tg.syncSystemToolkits();
//   app.use('/api', tg.router);
//   app.post('/triage/:id', tg.toolRun(), tg.requireTool('email_analyzer'), handler);

export { createToolgate, type Toolgate, type ToolgateOptions } from './toolgate';
export { createApp, type AppOptions } from './app';
export { defineTool, ToolRegistry, BUILTIN_LEGACY_NAMES, type HostTool, type ToolContext } from './tools/tool-registry';
export { ToolRun, type DispatchOptions, type DispatchRun } from './run/tool-run';
export { RunService } from './run/run-service';
export { toolRun, currentRun, defaultRunOf, senderAsGiven, type RunRequest, type SenderCheck, type ToolRunOptions } from '../middleware/tool-run';
export { requireTool } from '../middleware/require-tool';
export { authenticate, requireRole, type AuthOptions, type AuthState, type Role } from '../middleware/auth';
export { errorHandler, notFoundHandler } from '../middleware/error-handler';
export { authenticatedSender } from '../middleware/sender-check';
export { clientRateLimit, type ClientRateLimitOptions } from '../middleware/rate-limit';
export { syncSystemToolkits, type SyncReport } from './services/system-toolkits';
export { loadAgentPolicy } from './services/policy-loader';
export { createSequelize } from './db/connect';
export { migrateUp, migrateDown, pendingMigrations } from './db/migrate';
export * from './core';
export * from './errors';
export { migrateEnabledTools, type EnabledToolsMigrationOptions, type MigrationProgress } from './legacy/migrate-enabled-tools';
export { undoEnabledTools } from './legacy/undo-enabled-tools';
export type { MigrationReport } from './legacy/report';
export { ParityMismatchError, SchemaNotMigratedError, MigrationBusyError } from './legacy/errors';
export * from './llm';
export * from './documents';
export * from './tasks';
export { validateBody, bodyOf } from '../middleware/validate-body';
