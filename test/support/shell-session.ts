// One bash, kept for a whole test as a reader keeps one terminal: what a command sets (T=..., H=...)
// stays set for the commands after it, across blocks, until the test ends it. Each command's output
// (stdout and stderr together) is read up to a marker the shell prints when it is done.
import { spawn } from 'node:child_process';

export interface ShellSession {
  /** Runs one command, as if pasted, and resolves with what it printed. */
  run(command: string, timeoutMs?: number): Promise<string>;
  close(): void;
}

export function shellSession(cwd: string, env: NodeJS.ProcessEnv): ShellSession {
  const bash = spawn('bash', ['--noprofile', '--norc'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let waiting: (() => void) | null = null;
  const take = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    waiting?.();
  };
  bash.stdout.on('data', take);
  bash.stderr.on('data', take);
  let count = 0;
  return {
    run(command, timeoutMs = 30_000) {
      const marker = `__readme_command_${++count}_done__`;
      output = '';
      // On a line of its own even after an answer with no newline at its end.
      bash.stdin.write(`${command}\nprintf '\\n%s\\n' '${marker}'\n`);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting = null;
          reject(new Error(`no end of the command within ${timeoutMs} ms:\n${command}\nit printed:\n${output}`));
        }, timeoutMs);
        waiting = () => {
          const at = output.indexOf(`\n${marker}\n`);
          if (at === -1) return;
          clearTimeout(timer);
          waiting = null;
          resolve(output.slice(0, at));
        };
        waiting();
      });
    },
    close() {
      bash.stdin.end();
      if (bash.exitCode === null) bash.kill();
    },
  };
}
