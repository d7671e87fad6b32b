import { and, eq } from 'drizzle-orm';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { caseSteps } from '../db/schema';
import { createClient } from '../server/oidc/oidc-clients';
import { systemClock } from '../server/platform/clock';
import { createTeam } from '../server/teams/manage-teams';
import { PASSKEY_SCRIPT_PATH } from '../server/verification/methods/passkey/page-script';
import { apiClient } from '../test/support/api-client';
import { addPlatformAuthenticator } from '../test/support/virtual-authenticator';
import { type CaseWire, expect, expectAccessible, markedPng, test, uniqueEmail } from './support/fixtures';

/** Where the relying party (played by openid-client) takes the verdict: intercepted by the page. */
const REDIRECT = 'http://127.0.0.1:9/idp/identity-verification/callback';

/**
 * Both passkey ceremonies as a subject's phone runs them, with Chromium's own WebAuthn stack
 * answering through a CDP virtual authenticator (a platform authenticator: internal transport,
 * resident keys, user verification): a verified case offers a passkey and saves it; a later case
 * asking for `passkey` closes by that passkey alone. Without JavaScript the page says plainly that
 * it cannot use one, and the offer can still be declined.
 */
type PasskeyCase = CaseWire & {
  verification_methods: CaseWire['verification_methods'] & {
    passkey: {
      requested: boolean;
      verified: boolean;
      passkey_id: string | null;
      enrolling_case_id: string | null;
    };
  };
};

test.describe('a passkey', () => {
  test('is saved at the end of a verified case, and re-verifies the person alone', async ({
    page,
    database,
    baseUrl,
  }) => {
    const { testKey } = await createTeam(
      database.db,
      { name: 'Passkey Desk', adminEmail: uniqueEmail('pk-admin') },
      systemClock,
    );
    const api = apiClient(baseUrl, testKey.token);
    const subject = uniqueEmail('returning');
    const first = await api.post<PasskeyCase>('/v1/cases/', {
      subject_email: subject,
      verification_methods: { email: true },
      offer_passkey: true,
    });
    expect(first.status, first.text).toBe(201);
    await api.post(`/v1/cases/${first.body.id}/simulate/`, { action: 'complete_step', method: 'email' });

    const { cdp, authenticatorId } = await addPlatformAuthenticator(page);
    await page.goto(first.body.verification_url);
    await expect(page.getByRole('heading', { name: 'Save a passkey for next time' })).toBeVisible();
    await expect(page.getByText('it needs JavaScript and passkey support')).toBeHidden();
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Save a passkey' }).click();
    await expect(page.locator('#notice')).toHaveText('Your passkey is saved for next time.');
    await expect(page.locator('.passkey-saved')).toHaveText('A passkey is saved for next time.');
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]?.isResidentCredential).toBe(true);

    // The helpdesk's next call: the passkey alone.
    const again = await api.post<PasskeyCase>('/v1/cases/', {
      subject_email: subject,
      verification_methods: { passkey: true },
    });
    expect(again.status, again.text).toBe(201);
    const started = Date.now();
    await page.goto(again.body.verification_url);
    await page.getByRole('button', { name: 'Use my passkey' }).click();
    await expect(page.locator('#notice')).toHaveText('Thank you, your passkey is confirmed.');
    await expect(page.locator('#case-summary')).toContainText('All steps are done');
    test.info().annotations.push({ type: 're-verification', description: `${Date.now() - started} ms` });
    await expectAccessible(page);
    const closed = await api.get<PasskeyCase>(`/v1/cases/${again.body.id}/`);
    expect(closed.body.status).toBe('closed');
    expect(closed.body.verification_methods.passkey).toMatchObject({
      requested: true,
      verified: true,
      enrolling_case_id: first.body.id,
    });
    // The authenticator counted the signature the server checked.
    const after = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(after.credentials[0]?.signCount).toBeGreaterThan(0);
  });

  test('a cancelled prompt says so and can be tried again; a page without JavaScript says it cannot', async ({
    page,
    browser,
    database,
    baseUrl,
  }) => {
    const { testKey } = await createTeam(
      database.db,
      { name: 'Passkey Desk 2', adminEmail: uniqueEmail('pk-admin2') },
      systemClock,
    );
    const api = apiClient(baseUrl, testKey.token);
    const subject = uniqueEmail('declines');
    const offered = await api.post<PasskeyCase>('/v1/cases/', {
      subject_email: subject,
      verification_methods: { email: true },
      offer_passkey: true,
    });
    await api.post(`/v1/cases/${offered.body.id}/simulate/`, { action: 'complete_step', method: 'email' });

    // A virtual authenticator that will not verify the user: the browser's prompt fails.
    await addPlatformAuthenticator(page, { userVerified: false });
    await page.goto(offered.body.verification_url);
    await page.getByRole('button', { name: 'Save a passkey' }).click();
    await expect(page.locator('.passkey-message')).toHaveText('No passkey was saved. You can try again.');
    await expect(page.getByRole('button', { name: 'Save a passkey' })).toBeEnabled();
    await expect(page.getByText('This browser cannot save a passkey here')).toBeHidden();

    // JavaScript on, but no WebAuthn (an old or locked-down browser): once the page's script has
    // run, the same words instead of the button.
    const withoutWebAuthn = await browser.newContext();
    await withoutWebAuthn.addInitScript(() => {
      Object.defineProperty(window, 'PublicKeyCredential', { value: undefined, configurable: true });
    });
    const bare = await withoutWebAuthn.newPage();
    const scriptRan = bare.waitForResponse(
      (response) => new URL(response.url()).pathname === PASSKEY_SCRIPT_PATH,
    );
    await bare.goto(offered.body.verification_url);
    await scriptRan;
    await bare.waitForLoadState('networkidle');
    await expect(bare.getByText('This browser cannot save a passkey here')).toBeVisible();
    await expect(bare.getByRole('button', { name: 'Save a passkey' })).toBeHidden();
    await withoutWebAuthn.close();

    // Without JavaScript: the words instead of the button, and the plain form to say no.
    const plain = await browser.newContext({ javaScriptEnabled: false });
    const noScript = await plain.newPage();
    await noScript.goto(offered.body.verification_url);
    await expect(noScript.getByText('This browser cannot save a passkey here')).toBeVisible();
    await expect(noScript.getByRole('button', { name: 'Save a passkey' })).toBeHidden();
    await noScript.getByRole('button', { name: 'No, thanks' }).click();
    await expect(noScript.locator('#notice')).toHaveText(
      'No passkey will be saved. You can close this page.',
    );
    await noScript.reload();
    await expect(noScript.getByRole('heading', { name: 'Save a passkey for next time' })).toHaveCount(0);
    await plain.close();
  });

  test('re-verifies a returning employee for Okta: a {passkey: true} template through the OpenID provider', async ({
    page,
    database,
    baseUrl,
  }) => {
    const { team, testKey } = await createTeam(
      database.db,
      { name: 'Okta Passkeys', adminEmail: uniqueEmail('okta-pk-admin') },
      systemClock,
    );
    const api = apiClient(baseUrl, testKey.token);
    const email = uniqueEmail('employee');
    // Onboarding: the document checked on the page, then a passkey saved.
    const onboarding = await api.post<PasskeyCase>('/v1/cases/', {
      subject_email: email,
      subject_name: 'Ada Lovelace',
      verification_methods: { government_id: true },
      offer_passkey: true,
    });
    expect(onboarding.status, onboarding.text).toBe(201);
    await addPlatformAuthenticator(page);
    await page.goto(onboarding.body.verification_url);
    await page
      .getByLabel('Photo of your ID document')
      .setInputFiles(markedPng('passport.png', 'VOUCH-TEST:NAME=Ada Lovelace;'));
    await page.getByLabel('Selfie', { exact: true }).setInputFiles(markedPng('selfie.png'));
    await page.getByRole('button', { name: 'Submit for checking' }).click();
    await page.getByRole('button', { name: 'Save a passkey' }).click();
    await expect(page.locator('#notice')).toHaveText('Your passkey is saved for next time.');
    const checked = await api.get<
      PasskeyCase & { verification_methods: { government_id: { verified: boolean } } }
    >(`/v1/cases/${onboarding.body.id}/`);
    expect(checked.body.status).toBe('closed');

    // The recovery flow: Okta pushes its request for the passkey template, the browser follows.
    const returning = await api.post('/v1/templates/', {
      name: 'returning',
      verification_methods: { passkey: true },
    });
    expect(returning.status, returning.text).toBe(201);
    const { client, secret } = await createClient(
      database.db,
      team.id,
      { name: 'Okta', redirectUris: [REDIRECT], defaultTemplate: 'returning', livemode: false },
      new Date(),
    );
    const config = await oidc.discovery(
      new URL(baseUrl),
      client.id,
      undefined,
      oidc.ClientSecretPost(secret),
      {
        execute: [oidc.allowInsecureRequests],
      },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const authorize = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: 'openid profile identity_assurance idv_flow_returning',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      login_hint: '00uRETURNING',
      claims: JSON.stringify({
        id_token: {
          verified_claims: [
            {
              verification: {
                trust_framework: { value: 'IDV-DELEGATED', essential: true },
                assurance_level: { value: 'VERIFIED', essential: true },
              },
              claims: {
                given_name: { value: 'Ada', fuzzy: true },
                family_name: { value: 'Lovelace', fuzzy: true },
                email: { value: email },
              },
            },
          ],
        },
      }),
    });
    let callback: URL | undefined;
    await page.route(`${REDIRECT}**`, async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/html', body: '<title>Back at Okta</title>' });
    });
    await page.goto(authorize.toString());
    await expect(page).toHaveURL(/\/v\/[0-9A-Za-z]{16}$/);
    await page.getByRole('button', { name: 'Use my passkey' }).click();
    await expect(page).toHaveTitle('Back at Okta');
    if (!callback) throw new Error('the browser did not come back');
    expect(callback.searchParams.get('state')).toBe(state);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const { payload } = await jwtVerify(
      tokens.id_token ?? '',
      createRemoteJWKSet(new URL(`${baseUrl}/.well-known/jwks.json`)),
      { issuer: baseUrl, audience: client.id, algorithms: ['RS256'] },
    );
    expect(payload).toMatchObject({
      sub: '00uRETURNING',
      nonce,
      amr: ['hwk', 'user'],
      verified_claims: [
        {
          verification: { trust_framework: 'IDV-DELEGATED', assurance_level: 'VERIFIED' },
          claims: { given_name: 'Ada', family_name: 'Lovelace' },
        },
      ],
    });
    // The verification's time is the onboarding's document check, not this morning's passkey.
    const [claims] = payload.verified_claims as Array<{ verification: { time: string } }>;
    const [idStep] = await database.db
      .select({ at: caseSteps.verifiedAt })
      .from(caseSteps)
      .where(and(eq(caseSteps.caseId, onboarding.body.id), eq(caseSteps.method, 'government_id')));
    expect(claims?.verification.time).toBe(idStep?.at?.toISOString());
  });
});
