// Where the run service reads compiled policies, by the policyCache option's mode: the database each
// time, a cache checked against the policy's version, or a cache the policy listener invalidates.
import type { Sequelize } from 'sequelize';
import { dedicatedClient } from './db/dedicated-client';
import { NotificationsUndeliveredError } from './db/policy-listener';
import { ToolgateConfigError } from './errors';
import type { ToolgateMetrics } from './metrics/toolgate-metrics';
import type { PolicyCacheConfig } from './policy-cache-options';
import { ListenedPolicies, type Invalidation } from './run/listened-policies';
import type { PolicyRead, PolicySource } from './run/policy-source';
import { VersionedPolicies } from './run/versioned-policies';
import { loadPolicyVersion } from './services/policy-loader';
import type { ToolgateLogger } from './toolgate-logger';

/** The policy source for the cache mode, told to the metrics (and the logger, when the listener is lost). */
export function policySources(
  sequelize: Sequelize,
  config: PolicyCacheConfig,
  metrics: ToolgateMetrics,
  logger: ToolgateLogger | undefined,
  channel: string,
): ((read: PolicyRead) => PolicySource) | undefined {
  const cache = { maxAgents: config.maxAgents, maxAgeMs: config.maxAgeMs };
  switch (config.mode) {
    case 'off':
      return undefined;
    case 'strict':
      return (read) => new VersionedPolicies(read, (agentId) => loadPolicyVersion(sequelize, agentId), cache);
    case 'listen':
      return (read) => {
        const client = () => dedicatedClient(sequelize, { keepAlive: true, application_name: 'toolgate policy listener' });
        const policies = new ListenedPolicies(sequelize, read, client, { ...cache, listener: config.listener, channel });
        policies.on('invalidated', (i: Invalidation) => metrics.invalidated(i.source));
        policies.on('connecting', () => metrics.listener('connecting'));
        policies.on('closed', () => metrics.listener('closed'));
        policies.on('listening', () => {
          metrics.listener('listening');
          logger?.info?.({}, 'the policy listener holds: compiled policies are cached');
        });
        policies.on('lost', (err: unknown) => {
          metrics.listener('lost');
          // The error's name and code only: the driver's messages are not toolgate's to pass on.
          const code = (err as { code?: unknown } | undefined)?.code;
          logger?.warn?.(
            { err: err instanceof Error ? { name: err.name, code: typeof code === 'string' ? code : undefined } : typeof err },
            // This one is toolgate's own, and names the likely cause (a pooler that drops notifications).
            err instanceof NotificationsUndeliveredError
              ? `the policy listener is not told of changes: ${err.message}`
              : 'the policy listener lost its connection: runs read through the database until it is back',
          );
        });
        return policies;
      };
    default:
      throw new ToolgateConfigError('ERR_TOOLGATE_POLICY_CACHE', `Unknown policy cache mode ${JSON.stringify(config.mode)}.`);
  }
}
