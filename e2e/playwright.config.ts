import { defineConfig, devices } from '@playwright/test';

/**
 * Browser tests of the subject's verification pages against the built app (`next build` into
 * NEXT_DIST_DIR first; the global setup starts PostgreSQL, an SMTP inbox, a Twilio stand-in and
 * the app). Debian's chromium: Playwright cannot download its own browsers here.
 */
const chromium = {
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
};

export default defineConfig({
  testDir: '.',
  // Per build directory, so two engineers' runs in one tree never delete each other's artifacts.
  outputDir: `../test-results/playwright${process.env.NEXT_DIST_DIR || '.next'}`,
  testMatch: '*.spec.ts',
  globalSetup: './global-setup.ts',
  fullyParallel: true,
  // The app, PostgreSQL and the browsers share two cores.
  workers: 2,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  forbidOnly: !!process.env.CI,
  reporter: process.env.CI ? 'list' : [['list']],
  use: { trace: 'retain-on-failure', launchOptions: chromium },
  projects: [
    { name: 'desktop-chromium', use: { ...devices['Desktop Chrome'], launchOptions: chromium } },
    { name: 'phone-chromium', use: { ...devices['Pixel 7'], launchOptions: chromium } },
  ],
});
