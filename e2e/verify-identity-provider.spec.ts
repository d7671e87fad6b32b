import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { createClient } from '../server/oidc/oidc-clients';
import { systemClock } from '../server/platform/clock';
import { createTeam } from '../server/teams/manage-teams';
import { apiClient } from '../test/support/api-client';
import { expect, expectAccessible, markedPng, test, uniqueEmail } from './support/fixtures';

/** Where the relying party (played by openid-client) takes the verdict: intercepted by the page. */
const REDIRECT = 'http://127.0.0.1:9/idp/identity-verification/callback';

/**
 * Okta's custom IDV, end to end (issue 30): openid-client pushes Okta's request, a real browser
 * follows the authorize URL into the hosted flow, takes the simulated ID check with the document
 * showing the names sent, and is sent back with a code; the code is exchanged for an ID token that
 * verifies against the JWKS and asserts the names. A document showing other names sends the
 * browser back with access_denied.
 */
test.describe('an identity provider’s verification flow', () => {
  for (const [label, shown, outcome] of [
    ['the document shows the names sent', 'Ada Lovelace', 'code'],
    ['the document shows other names', 'Grace Hopper', 'access_denied'],
  ] as const) {
    test(`in a browser: ${label}`, async ({ page, database, baseUrl }) => {
      const { team, testKey } = await createTeam(
        database.db,
        { name: 'Okta Co', adminEmail: uniqueEmail('okta-admin') },
        systemClock,
      );
      const template = await apiClient(baseUrl, testKey.token).post('/v1/templates/', {
        name: 'id-only',
        verification_methods: { government_id: true },
      });
      expect(template.status).toBe(201);
      const { client, secret } = await createClient(
        database.db,
        team.id,
        { name: 'Okta', redirectUris: [REDIRECT], defaultTemplate: 'id-only', livemode: false },
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
        scope: 'openid profile identity_assurance',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
        login_hint: '00uE2EUSER',
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
                  email: { value: uniqueEmail('ada'), fuzzy: true },
                },
              },
            ],
          },
        }),
      });

      // The relying party's callback: what the browser is sent back with.
      let callback: URL | undefined;
      await page.route(`${REDIRECT}**`, async (route) => {
        callback = new URL(route.request().url());
        await route.fulfill({ status: 200, contentType: 'text/html', body: '<title>Back at Okta</title>' });
      });
      await page.goto(authorize.toString());
      await expect(page).toHaveURL(/\/v\/[0-9A-Za-z]{16}$/);
      await expectAccessible(page);
      await page
        .getByLabel('Photo of your ID document')
        .setInputFiles(markedPng('passport.png', `VOUCH-TEST:NAME=${shown};`));
      await page.getByLabel('Selfie', { exact: true }).setInputFiles(markedPng('selfie.png'));
      await page.getByRole('button', { name: 'Submit for checking' }).click();
      await expect(page).toHaveTitle('Back at Okta');
      if (!callback) throw new Error('the browser did not come back');
      expect(callback.searchParams.get('state')).toBe(state);
      expect(callback.searchParams.get('iss')).toBe(baseUrl);

      if (outcome === 'access_denied') {
        expect(callback.searchParams.get('error')).toBe('access_denied');
        expect(callback.searchParams.get('error_description')).toBe(
          'The verification failed (name_mismatch).',
        );
        return;
      }
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
        sub: '00uE2EUSER',
        nonce,
        verified_claims: [
          {
            verification: { trust_framework: 'IDV-DELEGATED', assurance_level: 'VERIFIED' },
            // Plain values, as OpenID Connect for Identity Assurance has them: fuzzy is the request's.
            claims: { given_name: 'Ada', family_name: 'Lovelace' },
          },
        ],
      });
    });
  }
});
