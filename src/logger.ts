// Structured logs (pino): JSON lines, no secrets and no message bodies in them.
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(enabled = true): Logger {
  return pino({
    enabled,
    base: { service: 'toolgate' },
    redact: { paths: ['token', '*.token', 'authorization', '*.authorization', 'req.headers.authorization', 'body', '*.body'], remove: true },
  });
}
