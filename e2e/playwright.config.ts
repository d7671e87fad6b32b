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
  // Each flow runs once, at the width its person meets it: the console and the API reference on a
  // desktop, the subject's pages on a phone (a subject opens the link where the mail or text lands).
  // verify-desktop.spec.ts checks the subject's and the manager's pages at desktop width, and
  // console.spec.ts the console at phone width; repeating every flow at both widths doubled this
  // stage's time and tested the same server twice.
  projects: [
    {
      name: 'desktop-chromium',
      testMatch: ['**/console/*.spec.ts', '**/docs.spec.ts', '**/verify-desktop.spec.ts'],
      use: { ...devices['Desktop Chrome'], launchOptions: chromium },
    },
    {
      name: 'phone-chromium',
      testMatch: ['**/verify-*.spec.ts', '**/case-lifecycle.spec.ts'],
      testIgnore: ['**/verify-desktop.spec.ts'],
      use: { ...devices['Pixel 7'], launchOptions: chromium },
    },
  ],
});
