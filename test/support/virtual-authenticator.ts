import type { CDPSession, Page } from '@playwright/test';

/**
 * A platform authenticator in Chromium, through the DevTools protocol's WebAuthn domain: internal
 * transport, resident keys, user verification (which it performs, unless told it fails), presence
 * given without a prompt. The browser's own WebAuthn stack answers the page.
 */
export async function addPlatformAuthenticator(
  page: Page,
  options: { userVerified?: boolean } = {},
): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: options.userVerified ?? true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}
