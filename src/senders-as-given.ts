// The warning of a toolgate that nobody told how senders count. Taken as given, a From is whatever
// the caller writes: anyone who writes an address a gate admits gets that gate's tools. The service
// says so in its start log (TOOLGATE_AUTHSERV_ID unset); a host hears it here, at construction,
// where it can still change the option: once per toolgate through its logger, and once per process
// as a process warning, as Node says its own deprecations (a host with one toolgate per tenant
// would otherwise print the same lines over and over).
import type { ToolgateLogger } from './toolgate-logger';

/** The warning's code, stable: a host's log filter or `process.on('warning')` matches on it. */
const SENDERS_AS_GIVEN = 'TOOLGATE_SENDERS_AS_GIVEN';

const MESSAGE =
  "createToolgate() was given no sender authentication, so every sender is taken at its word: anyone who writes a From that a gate admits gets that gate's tools. Give authservId, the authserv-id your receiving mail server stamps on Authentication-Results (SEMANTICS §7), or senderCheck: senderAsGiven to take senders as given on purpose.";

let emitted = false;

/** Through the host's logger when it has warn(), else as a process warning (printed to stderr by default). */
export function warnSendersAsGiven(logger: ToolgateLogger | undefined): void {
  if (logger?.warn) return logger.warn({ code: SENDERS_AS_GIVEN }, MESSAGE);
  if (emitted) return;
  emitted = true;
  process.emitWarning(MESSAGE, { type: 'ToolgateWarning', code: SENDERS_AS_GIVEN });
}
