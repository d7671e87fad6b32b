/**
 * The subject's language and the team's brand on pages, mails and texts (issue 28, decisions:
 * "Languages and branding"): which language each reader gets, right to left for Arabic, the
 * switch remembered per case, and the pseudo-locale proving that nothing a subject or a manager
 * reads bypassed the catalogue.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cases, devMailbox, teams } from '@/db/schema';
import { CATALOGUES } from '@/server/i18n/catalogues';
import { systemClock } from '@/server/platform/clock';
import { createTeam, updateTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { eventually } from '@/test/support/https-receiver';
import { openSubjectPage, postSubjectForm } from '@/test/support/subject-page';
import { readableText, untranslatedRuns } from '@/test/support/untranslated';

type Api = ReturnType<typeof apiClient>;
type CaseWire = { id: string; public_id: string; verification_url: string; locale: string | null };

const TEAM = 'Globex Corporation';
const SUBJECT = 'Jane Doe';
const MANAGER = 'Mia Manager';
const QUESTION = 'Which city is your office in?';
const SUPPORT = 'Questions? Contact IT at +1 555 0100';
/** What may stay plain ASCII in a pseudo-localised page: values from data, and the product's names. */
const DATA = [TEAM, SUBJECT, MANAGER, QUESTION, SUPPORT, 'Vouch', 'Stripe'];

let database: TestDatabase;
let app: RunningApp;
let live: Api;
let test: Api;
let teamId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  // No SMTP, dev SMS, simulated ID checks: live mode runs on the stand-ins (and says so), and every
  // mail and text lands in the dev mailbox. DEFAULT_LOCALE=en-XA: whatever has no language of its
  // own comes out pseudo-localised.
  app = await startApp({
    databaseUrl: database.url,
    env: {
      DEFAULT_LOCALE: 'en-XA',
      RATE_LIMIT_READ_PER_MINUTE: '100000',
      RATE_LIMIT_WRITE_PER_MINUTE: '100000',
    },
  });
  const created = await createTeam(database.db, { name: TEAM, adminEmail: 'admin@globex.test' }, systemClock);
  teamId = created.team.id;
  await database.db.update(teams).set({ supportLine: SUPPORT }).where(eq(teams.id, teamId));
  live = apiClient(app.baseUrl, created.key.token);
  test = apiClient(app.baseUrl, created.testKey.token);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

const ALL_METHODS = { email: true, sms: true, government_id: true, custom_question: true, manager: true };

async function createCase(
  client: Api,
  email: string,
  extra: Record<string, unknown> = {},
): Promise<CaseWire> {
  const res = await client.post<CaseWire>('/v1/cases/', {
    subject_email: email,
    subject_name: SUBJECT,
    verification_methods: ALL_METHODS,
    custom_question_text: QUESTION,
    custom_question_answer: 'Boston',
    manager_name: MANAGER,
    manager_email: `manager.${email}`,
    ...extra,
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** The last mail or text to `address` the worker put in the dev mailbox (it sends within a second). */
function mailTo(address: string) {
  return eventually(async () => {
    const rows = await database.db.select().from(devMailbox).where(eq(devMailbox.to, address));
    return rows.at(-1);
  }, 15_000);
}

function linkIn(text: string, prefix: string): string {
  const url = text.split(/\s+/).find((word) => word.startsWith(prefix));
  if (!url) throw new Error(`no ${prefix} link in:\n${text}`);
  return url;
}

async function page(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers, redirect: 'manual' });
  return { res, html: await res.text() };
}

function expectPseudo(html: string, where: string) {
  expect(html, where).toMatch(/<html lang="en-XA" dir="ltr">/);
  expect(untranslatedRuns(readableText(html), DATA), where).toEqual([]);
}

describe('which language each reader gets', () => {
  it('a case in German: its subject’s mail and pages are German whatever the browser asks, its manager’s are not', async () => {
    const created = await createCase(test, 'de.subject@globex.test', { locale: 'de-AT' });
    expect(created.locale).toBe('de');
    const mail = await mailTo('de.subject@globex.test');
    expect(mail.language).toBe('de');
    expect(mail.subject).toBe(CATALOGUES.de['mail.subjectLink.subject'].replace('{team}', TEAM));
    expect(mail.html).toContain('<html lang="de" dir="ltr">');
    expect(mail.text).toContain(CATALOGUES.de['mail.subjectLink.ignore']);

    const { res, html } = await page(created.verification_url, { 'Accept-Language': 'fr-FR,fr;q=0.9' });
    expect(res.headers.get('content-language')).toBe('de');
    expect(html).toContain('<html lang="de" dir="ltr">');
    expect(html).toContain(CATALOGUES.de['case.heading'].replace('{team}', TEAM));

    // The manager is not the person the case's language was chosen for: the team's default
    // (none here, so DEFAULT_LOCALE) for the mail, their own browser for the page.
    const managerMail = await mailTo('manager.de.subject@globex.test');
    expect(managerMail.language).toBe('en-XA');
    const managerUrl = linkIn(managerMail.text, `${created.verification_url}/manager/`);
    const managerPage = await page(managerUrl, { 'Accept-Language': 'ja-JP,ja;q=0.9,de;q=0.5' });
    expect(managerPage.html).toContain('<html lang="ja" dir="ltr">');
    expect(managerPage.html).toContain(CATALOGUES.ja['managerPage.heading'].replace('{team}', TEAM));
    // Whom it is about and who asks are isolated, so a right-to-left page keeps them whole.
    expect(managerPage.html).toMatch(
      new RegExp(`<dd><bdi>${SUBJECT}[^<]*de\\.subject@globex\\.test[^<]*</bdi></dd>`),
    );
    expect(managerPage.html).toContain(`<dd><bdi>${TEAM}</bdi></dd>`);
  });

  it('without a case locale: the browser’s language, then the team’s default; the team’s default writes the mails', async () => {
    await database.db.update(teams).set({ defaultLocale: 'nl' }).where(eq(teams.id, teamId));
    try {
      const created = await createCase(test, 'nl.subject@globex.test');
      expect(created.locale).toBeNull();
      expect((await mailTo('nl.subject@globex.test')).language).toBe('nl');
      expect((await mailTo('manager.nl.subject@globex.test')).language).toBe('nl');
      const asked = await page(created.verification_url, { 'Accept-Language': 'sv, pt;q=0.8' });
      expect(asked.html).toContain('<html lang="pt-BR" dir="ltr">');
      const unknown = await page(created.verification_url, { 'Accept-Language': 'sv, fi;q=0.8' });
      expect(unknown.html).toContain('<html lang="nl" dir="ltr">');
    } finally {
      await database.db.update(teams).set({ defaultLocale: null }).where(eq(teams.id, teamId));
    }
  });

  it('an Arabic case reads right to left, and its text message is Arabic', async () => {
    const created = await createCase(test, 'ar.subject@globex.test', { locale: 'ar' });
    const opened = await openSubjectPage(created.verification_url);
    expect(opened.html).toContain('<html lang="ar" dir="rtl">');
    const sent = await postSubjectForm(`${created.verification_url}/sms`, opened, {
      action: 'send',
      phone: '+447911123456',
    });
    expect(sent.headers.get('location')).toContain('n=sms-sent');
    const text = (await mailTo('+447911123456')).text;
    // The Latin team name isolated (U+2068 … U+2069), so its colon stays at its end in Arabic.
    expect(text).toBe(
      CATALOGUES.ar['sms.text']
        .replace('{team}', `\u2068${TEAM}\u2069`)
        .replace('{code}', '000000')
        .replace('{minutes}', '10'),
    );
  });

  it('the switch picks a language for this case only, remembered in a cookie, without JavaScript', async () => {
    const first = await createCase(test, 'switch.one@globex.test', { locale: 'de' });
    const second = await createCase(test, 'switch.two@globex.test', { locale: 'de' });
    // Every page links to the case's language page, which lists each language by its own name,
    // each a link back to the page the reader came from.
    const before = await page(first.verification_url);
    expect(before.html).toContain(
      `<a class="language" href="/v/${first.public_id}/language">Sprache: Deutsch</a>`,
    );
    const languages = await page(`${app.baseUrl}/v/${first.public_id}/language`);
    expect(languages.html).toContain(`<a href="/v/${first.public_id}?lang=ja" lang="ja">日本語</a>`);
    expect(languages.html).toContain(
      `<a href="/v/${first.public_id}?lang=de" lang="de" aria-current="true">Deutsch</a>`,
    );
    const fromElsewhere = await page(`${app.baseUrl}/v/${first.public_id}/language?from=%2Fmanager%2Fabc`);
    expect(fromElsewhere.html).toContain(`<a href="/v/${first.public_id}/manager/abc?lang=ja" lang="ja">`);
    const fromOutside = await page(`${app.baseUrl}/v/${first.public_id}/language?from=%2F%2Fevil.test`);
    expect(fromOutside.html).not.toContain('evil.test');
    const switched = await page(`${first.verification_url}?lang=ja`);
    expect(switched.html).toContain('<html lang="ja" dir="ltr">');
    const cookie = switched.res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(
      new RegExp(`^vouch_lang=ja; Max-Age=\\d+; Path=/v/${first.public_id}; HttpOnly; SameSite=Lax`),
    );
    const remembered = cookie.split(';')[0] ?? '';
    expect((await page(first.verification_url, { Cookie: remembered })).html).toContain('<html lang="ja"');
    // The browser would not send it to another case's pages; even sent, it is not read there
    // any differently than the case's own choice would be: the path keeps it to this case.
    expect((await page(second.verification_url)).html).toContain('<html lang="de"');
    // A language we do not write in is ignored, not echoed.
    const unknown = await page(`${first.verification_url}?lang=%3Cscript%3E`);
    expect(unknown.html).toContain('<html lang="de"');
    expect(unknown.res.headers.get('set-cookie') ?? '').not.toContain('vouch_lang');
  });
});

describe('the pseudo-locale: nothing a subject or a manager reads bypasses the catalogue', () => {
  it('every page of a live case with every method, each notice, the mails and the text message', async () => {
    const created = await createCase(live, 'pseudo.subject@globex.test');
    const opened = await openSubjectPage(created.verification_url);
    expectPseudo(opened.html, 'case page');
    expectPseudo((await page(`${app.baseUrl}/v/${created.public_id}/language`)).html, 'language page');
    expect(opened.html).toContain(SUPPORT);

    const codes = Object.keys(CATALOGUES.en)
      .filter((key) => key.startsWith('notice.'))
      .map((key) => key.slice('notice.'.length));
    for (const code of codes) {
      expectPseudo((await page(`${created.verification_url}?n=${code}&l=2`)).html, `notice ${code}`);
    }

    const sent = await postSubjectForm(`${created.verification_url}/sms`, opened, {
      action: 'send',
      phone: '+447911123450',
    });
    expect(sent.status).toBe(303);
    expectPseudo((await page(created.verification_url, { Cookie: opened.cookie })).html, 'code form');
    const sms = (await mailTo('+447911123450')).text;
    expect(untranslatedRuns([sms], DATA), sms).toEqual([]);

    const subjectMail = await mailTo('pseudo.subject@globex.test');
    const managerMail = await mailTo('manager.pseudo.subject@globex.test');
    for (const mail of [subjectMail, managerMail]) {
      expect(mail.language).toBe('en-XA');
      expect(untranslatedRuns([mail.subject, mail.text], DATA), mail.text).toEqual([]);
      expectPseudo(mail.html ?? '', `mail to ${mail.to}`);
    }

    const emailLink = await page(linkIn(subjectMail.text, `${created.verification_url}/email/`));
    expectPseudo(emailLink.html, 'e-mail link page');
    const managerUrl = linkIn(managerMail.text, `${created.verification_url}/manager/`);
    const managerPage = await openSubjectPage(managerUrl);
    expectPseudo(managerPage.html, 'manager page');
    const decided = await postSubjectForm(managerUrl, managerPage, { decision: 'confirm' });
    expectPseudo(
      (await page(new URL(decided.headers.get('location') ?? '', managerUrl).href)).html,
      'manager confirmed',
    );
    expectPseudo((await page(created.verification_url)).html, 'manager confirmed, subject page');

    const tooLarge = await postSubjectForm(`${created.verification_url}/question`, opened, {
      answer: 'x'.repeat(1_100_000),
    });
    expect(tooLarge.status).toBe(413);
    expectPseudo(await tooLarge.text(), '413 page');
    const notFound = await page(`${app.baseUrl}/v/not-a-case`);
    expect(notFound.res.status).toBe(404);
    expectPseudo(notFound.html, 'not-found page');
  });

  it('every way a case ends, on the subject’s and the manager’s pages', async () => {
    await updateTeam(database.db, teamId, { retentionDays: 30 });
    const ended: Array<[string, CaseWire]> = [];
    for (const [name, body] of [
      ['closed', null],
      ['failed', { action: 'fail_step', method: 'government_id' }],
      ['failed by the manager', { action: 'fail_step', method: 'manager' }],
      ['expired', { action: 'expire' }],
    ] as const) {
      const created = await createCase(test, `ended.${ended.length}@globex.test`);
      if (body) {
        const res = await test.post(`/v1/cases/${created.id}/simulate/`, body);
        expect(res.status, res.text).toBe(200);
      } else {
        for (const method of ['email', 'sms', 'government_id', 'custom_question', 'manager']) {
          const res = await test.post(`/v1/cases/${created.id}/simulate/`, {
            action: 'complete_step',
            method,
          });
          expect(res.status, res.text).toBe(200);
        }
      }
      ended.push([name, created]);
    }
    const canceled = await createCase(test, 'canceled@globex.test');
    expect((await test.post(`/v1/cases/${canceled.id}/cancel/`, {})).status).toBe(200);
    ended.push(['canceled', canceled]);
    const redacted = await createCase(test, 'redacted@globex.test');
    expect((await test.post(`/v1/cases/${redacted.id}/redact/`, {})).status).toBe(200);
    ended.push(['redacted', redacted]);

    for (const [name, created] of ended) {
      expectPseudo((await page(created.verification_url)).html, `${name} case page`);
    }
    const managerMail = await mailTo('manager.canceled@globex.test');
    const managerPage = await page(linkIn(managerMail.text, `${canceled.verification_url}/manager/`));
    expectPseudo(managerPage.html, 'canceled manager page');
    const [, expired] = ended[3] ?? [];
    const [row] = await database.db
      .select({ id: cases.id })
      .from(cases)
      .where(eq(cases.id, expired?.id ?? ''));
    expect(row).toBeDefined();
    await updateTeam(database.db, teamId, { retentionDays: null });
  });
});
