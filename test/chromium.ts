/**
 * Debian's Chromium, headless, for the tests of the web page (playwright-core drives it): where it is,
 * the reason to skip when it is not there, how it is started on a closed network, where screenshots go.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ROOT } from './helpers.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The reason the browser tests are skipped, or false when Chromium is installed. */
export const chromiumMissing = fs.existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

export const SCREENSHOTS = path.join(ROOT, 'test-output', 'screenshots');

// Flags for a closed network: without the background-networking ones Chromium keeps trying to reach Google.
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });

/** Saves the whole page as test-output/screenshots/NAME.png. */
export async function screenshotOf(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
