// The browser tier needs Debian's chromium. Where it is missing and we are root, it is installed once
// (apt-get, about a minute); otherwise the browser tests are skipped with a plain message. Under
// CI=true a missing browser is a failure, never a skip.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

function install(): string | null {
  if (existsSync(CHROMIUM_PATH)) return null;
  if (process.getuid?.() !== 0)
    return `${CHROMIUM_PATH} is missing and we are not root, so it cannot be installed (apt-get install chromium)`;
  console.log('# installing Debian chromium for the browser tests (apt-get, about a minute)…');
  const result = spawnSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium'], {
    stdio: 'inherit',
  });
  if (result.status !== 0 || !existsSync(CHROMIUM_PATH)) return `installing chromium with apt-get failed (exit ${result.status})`;
  return null;
}

const problem = install();
if (problem && process.env.CI === 'true') {
  throw new Error(`The browser tests must run under CI=true, but ${problem}.`);
}

/** false when the browser can run; otherwise the reason the browser tier is SKIPPED */
export const BROWSER_SKIP: string | false = problem ? `browser tier SKIPPED: ${problem}` : false;
if (BROWSER_SKIP) console.log(`# NOTE: ${BROWSER_SKIP}`);

/** A headless chromium with a fresh profile directory, removed on close; `javaScriptEnabled: false` browses as without JavaScript. */
export async function launchBrowser(
  options: { javaScriptEnabled?: boolean; timezoneId?: string } = {},
): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'booking-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
    javaScriptEnabled: options.javaScriptEnabled ?? true,
    ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
