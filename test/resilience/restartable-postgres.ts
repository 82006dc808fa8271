// The test side of cluster-controller.ts: a real PostgreSQL that a test can stop and start again on
// the same port and data folder while its app keeps running.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

export interface RestartablePostgres {
  /** postgres://…@127.0.0.1:PORT/postgres; the same after every start. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster and ends the controller process. */
  close(): Promise<void>;
}

type Reply = { ok: true; url?: string; port?: number } | { ok: false; error: string };

export async function startRestartablePostgres(dataDir: string): Promise<RestartablePostgres> {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    ['--require', require.resolve('tsx/cjs'), path.join(__dirname, 'cluster-controller.ts'), dataDir],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  child.stdin.on('error', () => undefined); // a controller that died is reported by the exit below
  child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  const replies = readline.createInterface({ input: child.stdout });
  const waiting: ((reply: Reply) => void)[] = [];
  replies.on('line', (line) => waiting.shift()?.(JSON.parse(line) as Reply));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => {
    for (const w of waiting.splice(0)) w({ ok: false, error: 'the cluster controller exited' });
  });

  const send = async (command: string): Promise<Reply & { ok: true }> => {
    const reply = await new Promise<Reply>((resolve) => {
      waiting.push(resolve);
      child.stdin.write(command + '\n');
    });
    if (!reply.ok) throw new Error(`cluster controller: ${command} failed: ${reply.error}`);
    return reply;
  };

  const first = await send('start');
  const url = first.url!;
  const port = first.port!;
  return {
    url,
    port,
    stop: async () => {
      await send('stop');
    },
    start: async () => {
      const again = await send('start');
      if (again.port !== port) throw new Error(`the cluster came back on port ${again.port}, not ${port}`);
    },
    close: async () => {
      child.stdin.end();
      // A controller stuck on stop is told to go; its exit hooks still stop the cluster.
      const timer = setTimeout(() => child.kill('SIGTERM'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
