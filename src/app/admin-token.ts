// With no admin token configured, the service makes one on first start and keeps it with its
// data (mode 0600), so the admin routes are never open and the token survives restarts.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { OPTION_BOUNDS } from '../option-bounds';

export async function ensureAdminToken(dataDir: string): Promise<{ token: string; file: string; created: boolean }> {
  const file = path.resolve(dataDir, 'admin-token');
  try {
    const token = (await fs.readFile(file, 'utf8')).trim();
    // A kept token too short for the plugin to take is replaced, not handed on to fail its check.
    if (token.length >= OPTION_BOUNDS.tokenLength) return { token, file, created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await fs.mkdir(path.dirname(file), { recursive: true });
  const token = randomBytes(32).toString('hex');
  await fs.writeFile(file, token + '\n', { mode: 0o600 });
  return { token, file, created: true };
}
