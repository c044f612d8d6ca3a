// The browser tier needs Debian's chromium. Where it is missing and we are root, it is installed once
// (apt-get, about a minute, under a file lock: the test files run in parallel); otherwise the browser tests
// are skipped with a plain message. Under CI=true a missing browser is a failure, never a skip.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { OWNER } from './installation.js';

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
  // the browser test files start at once, each in its own process: one installs under the lock, the others
  // wait for it and then find the browser (without the lock they failed on apt's own lock, on a new machine)
  const script = `test -x ${CHROMIUM_PATH} || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }`;
  const result = spawnSync('flock', [join(tmpdir(), 'booking-chromium-install.lock'), 'sh', '-c', script], { stdio: 'inherit' });
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

export type LaunchedBrowser = Awaited<ReturnType<typeof launchBrowser>>;

/** A new page of `browser` that gives up waiting after 10 s, so a missing element fails the test rather than hangs it. */
export async function newPage(browser: LaunchedBrowser): Promise<Page> {
  const page = await browser.context.newPage();
  page.setDefaultTimeout(10_000);
  return page;
}

export interface SignInOptions {
  /** who signs in (default: the browser tests' OWNER) */
  owner?: { email: string; password: string };
  /** the page opened to reach the sign-in form (default /admin/signin) */
  from?: string;
  /** where signing in must lead */
  landing?: RegExp;
}

/** Signs in through the sign-in page as a person would, and waits for the page it leads to. */
export async function signIn(page: Page, base: string, options: SignInOptions = {}): Promise<void> {
  const owner = options.owner ?? OWNER;
  await page.goto(`${base}${options.from ?? '/admin/signin'}`);
  await page.getByLabel('E-mail').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(options.landing ?? /\/admin\/(bookings|schedules)/);
}

/** A new page of `browser`, signed in to the admin area at `base`. */
export async function signedInPage(browser: LaunchedBrowser, base: string, options: SignInOptions = {}): Promise<Page> {
  const page = await newPage(browser);
  await signIn(page, base, options);
  return page;
}

/** The text of the page's main element. */
export const mainText = async (page: Page): Promise<string> => (await page.locator('main').textContent()) ?? '';
