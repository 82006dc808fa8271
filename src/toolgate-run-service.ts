// The run service as createToolgate() builds it: dispatch on the host's Sequelize, its faults told to
// the logger, its decisions to the metrics, and its compiled policies read through the cache mode's source.
import type { Sequelize } from 'sequelize';
import { errorFields } from '../middleware/error-handler';
import type { ApprovalStore } from './approvals/approval-store';
import type { Instances } from './db/instances';
import { policyChannel } from './db/schema';
import type { McpServers } from './mcp/mcp-servers';
import type { ToolgateMetrics } from './metrics/toolgate-metrics';
import { RunService } from './run/run-service';
import type { CheckedToolgateOptions } from './toolgate-options';
import { policySources } from './toolgate-policy-sources';
import type { ToolRegistry } from './tools/tool-registry';
import type { ToolgateTracing } from './tracing/toolgate-tracing';

export interface RunServiceParts {
  /** toolgate's own Sequelize (in its schema, when it has one); the host's runs the host's tools. */
  sequelize: Sequelize;
  hostSequelize: Sequelize;
  /** The schema toolgate's tables are in (null: the connection's own), which names the policy channel. */
  schema: string | null;
  registry: ToolRegistry;
  approvalStore: ApprovalStore;
  instances: Instances;
  metrics: ToolgateMetrics;
  mcp: McpServers;
  tracing: ToolgateTracing | undefined;
  options: CheckedToolgateOptions;
}

export function toolgateRunService(parts: RunServiceParts): RunService {
  const { sequelize, registry, metrics, mcp, tracing, options } = parts;
  const logger = options.logger;
  return new RunService(sequelize, registry, {
    toolSequelize: parts.hostSequelize,
    approvals: { store: parts.approvalStore, expiryMs: options.approvals },
    instances: parts.instances,
    graceMs: options.recovery.graceMs,
    onRecordError: (err, context) => {
      logger?.error(
        { ...context, err: recordErrorFields(err) },
        'a tool ran, but its outcome could not be recorded: its record stays started',
      );
    },
    onFault: (err, context) => {
      logger?.error(
        { ...context, err: errorFields(err) },
        context.stage === 'shadow'
          ? "a candidate's shadow could not be worked out: the record goes without it, and the live decision stands"
          : "toolgate's own fault after a tool ran: answered with what ran, not a 5xx",
      );
    },
    policies: policySources(sequelize, options.policyCache, metrics, logger, policyChannel(parts.schema)),
    observer: {
      gate: (s, cache) => metrics.gate(s, cache),
      hit: () => metrics.hit(),
      decision: (d) => metrics.decision(d),
      toolCall: (status) => metrics.toolCall(status),
      approvalFiled: () => metrics.approvals('requested'),
    },
    ...(mcp.configured ? { withheld: mcp.withheld } : {}),
    ...(tracing ? { tracing } : {}),
  });
}

/**
 * What the log says of a record that could not be completed: the error's kind and SQLSTATE, never
 * its message (which may quote the tool's words). The statement's error is node-postgres's own, or
 * Sequelize's around it.
 */
function recordErrorFields(err: unknown): { name: string; code?: string } | string {
  if (!(err instanceof Error)) return typeof err;
  const cause = (err as { parent?: unknown }).parent ?? err;
  const code = (cause as { code?: unknown }).code;
  return typeof code === 'string' ? { name: err.name, code } : { name: err.name };
}
