// The little of a logger toolgate writes to: a pino logger fits, and so does a console wrapper.
export interface ToolgateLogger {
  error(details: Record<string, unknown>, message: string): void;
  /** Conditions toolgate works around by itself (the policy listener lost, reading through). Optional. */
  warn?(details: Record<string, unknown>, message: string): void;
  info?(details: Record<string, unknown>, message: string): void;
}
