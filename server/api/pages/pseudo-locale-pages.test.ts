import { describe, expect, it } from 'vitest';
import { noticeFor } from '@/server/api/page-kit/notices';
import { otherBrowserPage } from '@/server/api/page-kit/provider-flow-pages';
import { refusedPage } from '@/server/api/page-kit/refused-page';
import {
  documentHtml,
  type PageFrame,
  unavailablePage,
  uploadsBusyPage,
} from '@/server/api/page-kit/respond';
import type { ProviderFlow } from '@/server/application/oidc/provider-flow';
import type { CaseRecord, CaseStepRow } from '@/server/cases/case-record';
import type { VerificationCase } from '@/server/cases/case-repository';
import { translator } from '@/server/i18n/translator';
import { Html } from '@/server/platform/html';
import type { PasskeyOffer } from '@/server/verification/methods/passkey/enrollment';
import { passkeyModule } from '@/server/verification/methods/passkey/module';
import { passkeyClosedPageOffer } from '@/server/verification/methods/passkey/offer-section';
import { readableText, untranslatedRuns } from '@/test/support/untranslated';
import { renderCasePage } from './case-page';

/**
 * The pages the integration test (test/integration/subject-languages.test.ts) cannot reach through
 * the app: the ID check by redirect (Stripe), uploads refused while the process is busy, the
 * database out of reach, the web process's own refusals. Rendered in the pseudo-locale, none may
 * keep plain ASCII that is not data.
 */
const TEAM = 'Globex Corporation';
const APPLICATION = 'Okta';
const DATA = [TEAM, 'Vouch', 'Stripe', APPLICATION];
const t = translator('en-XA');
const team = {
  name: TEAM,
  defaultLocale: null,
  color: '#0b6b2e',
  supportLine: null,
  logoPath: '/brand-logos/t/x.png',
};
const frame = (): PageFrame => ({
  t,
  team,
  path: '/v/abc',
  languages: { chooser: '/v/abc/language' },
  cookies: [],
});
const now = new Date('2026-11-26T10:00:00Z');

function step(method: CaseStepRow['method'], settings: Record<string, unknown> = {}): CaseStepRow {
  return {
    caseId: 'c',
    method,
    state: 'pending',
    failedAttempts: 0,
    settings,
    verifiedAt: null,
    failedAt: null,
    updatedAt: now,
  };
}

function identityCase(overrides: Partial<CaseRecord>, retentionDays: number | null): VerificationCase {
  const record: CaseRecord = {
    id: 'c',
    teamId: 't',
    livemode: true,
    publicId: 'abc',
    status: 'open',
    subjectEmail: 'jane@globex.test',
    subjectName: null,
    documentName: null,
    nameMatch: 'enforce',
    offerPasskey: false,
    passkeyOfferDeclinedAt: null,
    locale: null,
    notes: '',
    externalRef: null,
    failureReason: null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + 3600_000),
    updatedAt: now,
    canceledAt: null,
    redactedAt: null,
    resendCount: 0,
    lastResentAt: null,
    steps: [step('government_id'), step('selfie')],
    ...overrides,
  };
  return { record, team, teamRetentionDays: retentionDays };
}

function expectPseudo(html: string, where: string) {
  expect(html, where).toContain('<html lang="en-XA" dir="ltr">');
  expect(untranslatedRuns(readableText(html), DATA), where).toEqual([]);
}

async function bodyOf(response: Response): Promise<string> {
  return response.text();
}

/** A passkey case's page, with the closed page's offer as `offer` stands and `notice`, if any. */
function passkeyPage(
  found: VerificationCase,
  offer: PasskeyOffer,
  notice: ReturnType<typeof noticeFor> | null,
): ReturnType<typeof renderCasePage> {
  const closedPageOffer = passkeyClosedPageOffer(offer);
  return renderCasePage({
    found,
    now,
    identityFlow: 'upload',
    standIns: [],
    providerFlow: null,
    closedPageOffers: closedPageOffer ? [closedPageOffer] : [],
    frame: frame(),
    csrf: 'token',
    notice,
  });
}

describe('pages in the pseudo-locale', () => {
  it('the ID check by redirect: before, started, each erasure promise, and after redaction', () => {
    const variants: Array<[string, VerificationCase]> = [
      ['not started, kept until asked', identityCase({}, null)],
      ['not started, kept 30 days', identityCase({}, 30)],
      [
        'started',
        identityCase({ steps: [step('government_id', { provider_session_id: 'vs_1' }), step('selfie')] }, 1),
      ],
      ['redacted', identityCase({ status: 'closed', redactedAt: now }, null)],
    ];
    for (const [name, found] of variants) {
      const page = renderCasePage({
        found,
        now,
        identityFlow: 'redirect',
        standIns: ['identity', 'mail', 'texts'],
        providerFlow: null,
        frame: frame(),
        closedPageOffers: [],
        csrf: 'token',
        notice: null,
      });
      expectPseudo(page.html, name);
    }
  });

  it('the passkey: asked for, proven, failed; the closed page’s offer, and the passkey saved', () => {
    const variants: Array<[string, VerificationCase, PasskeyOffer]> = [
      ['asked for', identityCase({ steps: [step('passkey')] }, null), null],
      [
        'proven',
        identityCase({ status: 'closed', steps: [{ ...step('passkey'), state: 'verified' }] }, null),
        null,
      ],
      [
        'failed',
        identityCase(
          {
            status: 'failed',
            failureReason: 'passkey_failed',
            steps: [{ ...step('passkey'), state: 'failed' }],
          },
          null,
        ),
        null,
      ],
      [
        'offered',
        identityCase(
          { status: 'closed', offerPasskey: true, steps: [{ ...step('email'), state: 'verified' }] },
          null,
        ),
        'offer',
      ],
      [
        'saved',
        identityCase(
          { status: 'closed', offerPasskey: true, steps: [{ ...step('email'), state: 'verified' }] },
          null,
        ),
        'saved',
      ],
    ];
    for (const [name, found, passkeyOffer] of variants) {
      const page = passkeyPage(found, passkeyOffer, null);
      expectPseudo(page.html, name);
      if (passkeyOffer === 'offer' || name === 'asked for')
        expect(page.html, name).toContain('data-passkey=');
    }
  });

  it('each of the passkey’s notices, on the page asking for one and on the closed page’s offer', () => {
    const pages: Array<[string, VerificationCase, PasskeyOffer]> = [
      ['asked for', identityCase({ steps: [step('passkey')] }, null), null],
      [
        'offered',
        identityCase(
          { status: 'closed', offerPasskey: true, steps: [{ ...step('email'), state: 'verified' }] },
          null,
        ),
        'offer',
      ],
    ];
    const codes = Object.entries(passkeyModule.notices);
    expect(codes.length).toBeGreaterThan(0);
    for (const [code, error] of codes) {
      // With attempts left, as the wrong passkey's redirect carries them (`l`): an error says so.
      const notice = noticeFor(t, code, '2');
      expect(notice, code).toMatchObject({ error });
      for (const [name, found, passkeyOffer] of pages) {
        const page = passkeyPage(found, passkeyOffer, notice);
        const where = `${code} on the page ${name}`;
        expectPseudo(page.html, where);
        const shown = page.html.match(/<div id="notice" class="([^"]*)" role="([^"]*)"[^>]*>([^<]*)<\/div>/);
        expect(shown?.slice(1, 3), where).toEqual(error ? ['notice error', 'alert'] : ['notice', 'status']);
        expect(shown?.[3]?.trim(), where).not.toBe('');
      }
    }
  });

  it('a case an identity provider’s flow opened: who asked and when, and the page for another browser', async () => {
    const flow: ProviderFlow = {
      row: {
        id: 'f',
        clientId: 'vouch_client_x',
        teamId: 't',
        request: {},
        requestExpiresAt: now,
        authorizedAt: now,
        caseId: 'c',
        browserBindingHash: 'h',
        boundAt: now,
        codeHash: null,
        codeExpiresAt: null,
        codeUsedAt: null,
        createdAt: now,
      },
      application: APPLICATION,
      startedAt: now,
      boundHere: true,
    };
    const page = renderCasePage({
      found: identityCase({}, null),
      now,
      identityFlow: 'upload',
      standIns: [],
      providerFlow: flow,
      frame: frame(),
      closedPageOffers: [],
      csrf: 'token',
      notice: null,
    });
    expectPseudo(page.html, 'started by');
    expect(readableText(page.html).join(' ')).toContain(APPLICATION);
    const other = otherBrowserPage(frame(), { ...flow, boundHere: false });
    expect(other.status).toBe(403);
    expectPseudo(await bodyOf(other), 'another browser');
  });

  it('uploads refused while busy, the database out of reach, the web process’s own refusals', async () => {
    expectPseudo(await bodyOf(uploadsBusyPage(frame(), '/v/abc', 5)), 'uploads busy');
    expectPseudo(await bodyOf(unavailablePage(frame(), 5)), 'unavailable');
    for (const status of [404, 405, 413, 500]) {
      const answer = refusedPage(
        { url: 'http://localhost/v/abc/sms?lang=en-XA', headers: new Headers() },
        { DEFAULT_LOCALE: 'en', VOUCH_ENV: 'development' },
        status,
      );
      expectPseudo(answer.body, `refused ${status}`);
      expect(answer.headers['content-language']).toBe('en-XA');
    }
  });

  it('catches a string that bypasses the catalogue (the check itself can fail)', () => {
    const page = documentHtml({
      title: t.text('case.title'),
      body: new Html('<main><p>Plain English here</p></main>'),
      frame: frame(),
    });
    expect(untranslatedRuns(readableText(page.html), DATA)).toEqual([
      'Plain (in "Plain English here")',
      'English (in "Plain English here")',
      'here (in "Plain English here")',
    ]);
  });
});
