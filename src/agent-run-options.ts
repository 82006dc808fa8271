// The bounds on one agent run (SEMANTICS §10, §11): what a host may set, their defaults, and the
// range each may take. Read by the plugin's options and the service's environment alike, so both
// check the same.

export interface AgentRunLimits {
  /** The most model steps (answers) one run may take. */
  maxSteps: number;
  /** The most tool calls one run may make, over all its steps. */
  maxToolCalls: number;
  /** The most characters of a thread's earlier messages, calls and replies the model reads. */
  historyChars: number;
}

/** The defaults of the bounds on one run, and the range each may be set in. */
export const DEFAULT_AGENT_RUN_LIMITS: AgentRunLimits = { maxSteps: 8, maxToolCalls: 16, historyChars: 32_000 };
export const AGENT_RUN_LIMIT_RANGES: Readonly<Record<keyof AgentRunLimits, readonly [min: number, max: number]>> = {
  maxSteps: [1, 100],
  maxToolCalls: [1, 1000],
  historyChars: [1_000, 1_000_000],
};
