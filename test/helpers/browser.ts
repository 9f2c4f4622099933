/**
 * A real headless Chromium for the console's tests (Debian's `chromium`, driven by playwright-core). The
 * tests run when it is installed, and fail rather than skip with CI=true when it is not.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type ConsoleMessage, type Page } from 'playwright-core';

export const CHROMIUM = process.env.FORECASTD_CHROMIUM ?? '/usr/bin/chromium';

/** Flags for a quiet browser: nothing of its own reaches the network. */
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'];

export function browserTestOptions(): { skip?: string } {
  if (existsSync(CHROMIUM) || process.env.CI === 'true') return {};
  return { skip: `no Chromium at ${CHROMIUM} (apt-get install chromium; or set FORECASTD_CHROMIUM)` };
}

export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
}

/** Where the tests leave screenshots: FORECASTD_ARTIFACTS, else artifacts/ in the working copy. */
export function artifactsDir(): string {
  const dir = process.env.FORECASTD_ARTIFACTS ?? join(fileURLToPath(new URL('../../../', import.meta.url)), 'artifacts', 'console');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** What a page did that a test checks at the end: every request's URL, every console error. */
export interface Watched {
  readonly requests: string[];
  readonly errors: string[];
}

/** A context in a time zone far from Beijing, with every request and console error recorded. */
export async function watchedContext(browser: Browser, width: number, height: number, extra: { acceptDownloads?: boolean } = {}): Promise<{ context: BrowserContext; watched: Watched }> {
  const context = await browser.newContext({ viewport: { width, height }, timezoneId: 'America/Los_Angeles', locale: 'de-DE', acceptDownloads: extra.acceptDownloads ?? true });
  const watched: Watched = { requests: [], errors: [] };
  context.on('request', (r) => watched.requests.push(r.url()));
  context.on('page', (p) => watchPage(p, watched));
  return { context, watched };
}

function watchPage(page: Page, watched: Watched): void {
  page.on('console', (m: ConsoleMessage) => {
    if (m.type() === 'error') watched.errors.push(`${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => watched.errors.push(e.message));
}
