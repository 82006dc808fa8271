// `npm run bench:install-size`: what installing toolgate costs a host. Packs this repository, then
// installs into empty hosts: express alone, express with the tarball (npm installs the peers with
// it), and express with the peers alone, and prints the packages npm added and their size on disk.
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..');

async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await sizeOf(full);
    else if (entry.isFile()) total += (await fs.stat(full)).size;
  }
  return total;
}

async function install(tmp: string, name: string, specs: string[]): Promise<{ packages: number; bytes: number }> {
  const host = path.join(tmp, name);
  await fs.mkdir(host);
  await fs.writeFile(path.join(host, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true }));
  const { stdout } = await run('npm', ['install', '--no-audit', '--no-fund', ...specs], { cwd: host, maxBuffer: 16 * 1024 * 1024 });
  const packages = Number(/added (\d+) packages?/.exec(stdout)?.[1] ?? NaN);
  return { packages, bytes: await sizeOf(path.join(host, 'node_modules')) };
}

async function main(): Promise<void> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-size-'));
  try {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    const [pack] = JSON.parse(stdout.slice(stdout.indexOf('['))) as {
      filename: string;
      size: number;
      unpackedSize: number;
      entryCount: number;
    }[];
    console.log(
      `tarball ${pack!.filename}: ${pack!.entryCount} files, ${(pack!.size / 1e3).toFixed(1)} kB packed, ${(pack!.unpackedSize / 1e3).toFixed(1)} kB unpacked`,
    );
    const rows: [string, string[]][] = [
      ['express alone', ['express@5']],
      ['express + toolgate', ['express@5', path.join(tmp, pack!.filename)]],
      ['express + the peers alone', ['express@5', 'sequelize@6', 'pg@8', 'pg-hstore@2', 'zod@4']],
    ];
    for (const [label, specs] of rows) {
      const { packages, bytes } = await install(tmp, label.replace(/\W+/g, '-'), specs);
      console.log(`${label.padEnd(28)} ${String(packages).padStart(4)} packages  ${(bytes / 1e6).toFixed(1).padStart(6)} MB`);
    }
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
