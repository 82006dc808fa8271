// The two SenderChecks toolgate ships. authenticatedSender(authservId): for a deployment that names
// its receiving mail server (createToolgate's authservId, TOOLGATE_AUTHSERV_ID); the message's
// `authentication_results` must vouch for its From. senderAsGiven: every From taken at its word, the
// legacy behaviour, for a host that chooses it knowingly (its mail arrives authenticated some other way).
import type { Request } from 'express';
import { routingKeyOf } from '../src/core/routing-key';
import { authenticatedRoutingKey, isValidAuthservId, type SenderAuthentication } from '../src/core/sender-authentication';
import { ToolgateConfigError } from '../src/errors';
import { requestState } from './request-state';

/** Decides whether a sender counts (SEMANTICS §7); null means the run has no routing key. */
export type SenderCheck = (req: Request, sender: unknown, authenticationResults?: unknown) => string | null;

/**
 * @example
 * const tg = createToolgate({ sequelize, adminToken, senderCheck: authenticatedSender('mx.thescoop.com') });
 * // the same, shorter:
 * const tg = createToolgate({ sequelize, adminToken, authservId: 'mx.thescoop.com' });
 */
export function authenticatedSender(authservId: string): SenderCheck {
  if (!isValidAuthservId(authservId)) {
    throw new ToolgateConfigError(
      'ERR_TOOLGATE_AUTHSERV_ID',
      `authenticatedSender(${JSON.stringify(authservId)}) needs the authserv-id your receiving mail server stamps on Authentication-Results, such as "mx.example.com": one token, no spaces or ";".`,
    );
  }
  return function authenticatedSenderCheck(req: Request, sender: unknown, authenticationResults?: unknown): string | null {
    const decided = decide(sender, authenticationResults, authservId);
    if (req.res) requestState(req.res).senderAuthentication = decided;
    return decided.routing_key;
  };
}

function decide(sender: unknown, values: unknown, authservId: string): SenderAuthentication {
  if (values !== undefined && !(Array.isArray(values) && values.every((v) => typeof v === 'string'))) {
    return { routing_key: null, verdict: 'ambiguous', reason: 'authentication_results is not a list of header values' };
  }
  if (typeof sender !== 'string') return { routing_key: null, verdict: 'no_sender', reason: 'the message has no From' };
  return authenticatedRoutingKey({ from: sender, authenticationResults: (values ?? []) as string[], authservId });
}

/**
 * Anyone's From is the sender it names. Passing it as `senderCheck` says so on purpose, and
 * createToolgate does not warn; left to the default, it does.
 */
export const senderAsGiven: SenderCheck = (_req, sender) => (typeof sender === 'string' ? routingKeyOf(sender) : null);
