// The service as an operator runs it (`src/app/server.ts` in its own process), for the tests that need
// its real start, logs and SIGTERM: ready once it logs that it listens, and killed if it hangs.
//
//   const service = await startService({ env: { ...process.env, DATABASE_URL: db.url } });
//   await fetch(`${service.url}/api/agents`);
//   const { code, lines } = await service.stop();
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const LISTENING = /toolgate listening on (http:\/\/[^\s:/]+:(\d+))/;

export interface ServiceOptions {
  /** The process's whole environment; PORT is 0 (a free port) unless it names one. */
  env: NodeJS.ProcessEnv;
  /** Its working directory, where `.toolgate` is unless TOOLGATE_DATA_DIR says otherwise; the repository by default. */
  cwd?: string;
  startTimeoutMs?: number;
  stopTimeoutMs?: number;
}

export interface StoppedService {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Every non-empty line it wrote to stdout, in order. */
  lines: string[];
}

export interface RunningService {
  /** The address from its `listening` line, e.g. http://127.0.0.1:41234. */
  url: string;
  port: number;
  /** The non-empty lines it wrote to stdout so far. */
  lines(): string[];
  /** Those of them that are JSON log records, parsed. */
  records(): { msg: string; [field: string]: unknown }[];
  messages(): string[];
  /** stdout and stderr together, as they came. */
  output(): string;
  /** SIGTERM, then the exit once stdout is closed; killed and rejected after stopTimeoutMs. */
  stop(): Promise<StoppedService>;
  /** SIGKILL to its whole process group, for an afterAll after a failed test; nothing once it exited. */
  kill(): void;
}

/** An operator's shell: the environment without any of toolgate's settings or a DATABASE_URL. */
export function shellEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TOOLGATE_') && k !== 'DATABASE_URL'));
}

export async function startService({
  env,
  cwd = ROOT,
  startTimeoutMs = 60_000,
  stopTimeoutMs = 15_000,
}: ServiceOptions): Promise<RunningService> {
  // One process, node with tsx's loader, so SIGTERM reaches the service itself, as the README says to
  // signal it (not a tsx command that relays it to a child).
  // Its own process group, so that a kill on a timeout reaches anything it started.
  const child = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), path.join(ROOT, 'src', 'app', 'server.ts')], {
    cwd,
    detached: true,
    env: { PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });

  const lines: string[] = [];
  let output = '';
  let partial = '';
  let onLine = (_line: string): void => undefined;
  const take = (line: string) => {
    if (line.trim() === '') return;
    lines.push(line);
    onLine(line);
  };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    parts.forEach(take);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => {
      take(partial);
      partial = '';
      resolve({ code, signal });
    }),
  );
  let exited = false;
  void closed.then(() => (exited = true));

  const kill = () => {
    if (exited || !child.pid) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // The group is already gone.
    }
  };
  const within = async <T>(ms: number, work: Promise<T>, what: string): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        kill();
        reject(new Error(`the service ${what} within ${ms} ms and was killed:\n${output}`));
      }, ms);
    });
    try {
      return await Promise.race([work, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  };

  const listening = new Promise<RegExpExecArray>((resolve, reject) => {
    onLine = (line) => {
      const found = LISTENING.exec(line);
      if (found) resolve(found);
    };
    void closed.then(({ code, signal }) => reject(new Error(`the service exited (${signal ?? code}) before it listened:\n${output}`)));
  });
  const [, url, port] = await within(startTimeoutMs, listening, 'did not listen');
  onLine = () => undefined;

  const records = () =>
    lines.filter((l) => l.trim().startsWith('{')).map((l) => JSON.parse(l) as { msg: string; [field: string]: unknown });
  return {
    url: url!,
    port: Number(port),
    lines: () => [...lines],
    records,
    messages: () => records().map((r) => r.msg),
    output: () => output,
    kill,
    stop: async () => {
      if (!exited) child.kill('SIGTERM');
      const { code, signal } = await within(stopTimeoutMs, closed, 'did not exit after SIGTERM');
      return { code, signal, lines: [...lines] };
    },
  };
}
