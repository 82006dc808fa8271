// Headless Chromium for the end-to-end tests: Debian's `chromium` driven by playwright-core, never
// a downloaded browser. Where none is installed, the tests are skipped, loudly; on CI (CI set),
// a missing browser is an error, since .ci/run installs it.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.TOOLGATE_CHROMIUM ?? '/usr/bin/chromium';

export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const line = `BROWSER TESTS SKIPPED: no Chromium at ${CHROMIUM}. Install Debian's package (apt-get install -y chromium) or set TOOLGATE_CHROMIUM; no browser is ever downloaded.`;
  if (process.env.CI) throw new Error(`${line} On CI this is an error: .ci/run installs it.`);
  process.stderr.write(`\n${'!'.repeat(100)}\n!!! ${line}\n${'!'.repeat(100)}\n\n`);
  return false;
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh, empty profile each time: no cookie, cache or setting carries over between runs. */
export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'toolgate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
