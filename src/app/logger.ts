// Structured logs (pino), no secrets and no message bodies in them: readable lines on a terminal,
// JSON lines where a program reads them (a pipe, a file, CI).
import pino from 'pino';
import pinoPretty from 'pino-pretty';

/**
 * The service's own logger: pino, with its levels and child loggers. A host's logger is the smaller
 * ToolgateLogger (toolgate-logger.ts), which this one fits.
 */
export type ServiceLogger = pino.Logger;

/** `auto`: pretty when stdout is a terminal, JSON otherwise. */
export const LOG_FORMATS = ['auto', 'pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** What `auto` means for a stream: a person reads a terminal, a program reads anything else. */
function resolveLogFormat(format: LogFormat, stream: { isTTY?: boolean } = process.stdout): 'pretty' | 'json' {
  if (format !== 'auto') return format;
  return stream.isTTY === true ? 'pretty' : 'json';
}

export function createLogger(enabled = true, format: LogFormat = 'json'): ServiceLogger {
  const options: pino.LoggerOptions = {
    enabled,
    base: { service: 'toolgate' },
    redact: {
      paths: ['token', '*.token', 'authorization', '*.authorization', 'req.headers.authorization', 'body', '*.body'],
      remove: true,
    },
  };
  // Both write synchronously, in this thread: a line is out before the call returns, so the last
  // ones (`stopped`) are not lost when the process exits, as they can be from a transport's worker.
  const destination =
    resolveLogFormat(format) === 'pretty'
      ? pinoPretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'service' })
      : pino.destination({ dest: 1, sync: true });
  return pino(options, destination);
}
