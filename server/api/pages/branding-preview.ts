import type { CaseRecord, CaseStepRow } from '@/server/cases/case-record';
import type { VerificationCase } from '@/server/cases/case-repository';
import { translator } from '@/server/i18n/translator';
import type { TeamPresentation } from '@/server/teams/presentation';
import { emailMethod } from '@/server/verification/methods/email/definition';
import { emailLinkMail } from '@/server/verification/methods/email/link-mail';
import { smsMethod } from '@/server/verification/methods/sms/definition';
import { renderCasePage } from './case-page';

/** A made-up case, never stored: what a subject of the team would see on opening their link. */
function sampleCase(team: TeamPresentation, now: Date): VerificationCase {
  const step = (method: CaseStepRow['method'], state: CaseStepRow['state']): CaseStepRow => ({
    caseId: 'preview',
    method,
    state,
    failedAttempts: 0,
    settings: {},
    verifiedAt: state === 'verified' ? now : null,
    failedAt: state === 'failed' ? now : null,
    updatedAt: now,
  });
  const record: CaseRecord = {
    id: 'preview',
    teamId: 'preview',
    livemode: true,
    publicId: 'preview',
    status: 'open',
    subjectEmail: 'alex.example@example.com',
    subjectName: 'Alex Example',
    documentName: null,
    nameMatch: 'enforce',
    offerPasskey: false,
    passkeyOfferDeclinedAt: null,
    locale: null,
    notes: '',
    externalRef: null,
    failureReason: null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + 48 * 3600_000),
    updatedAt: now,
    canceledAt: null,
    redactedAt: null,
    resendCount: 0,
    lastResentAt: null,
    steps: [step(emailMethod.key, 'verified'), step(smsMethod.key, 'pending')],
  };
  return { record, team, teamRetentionDays: null };
}

/**
 * The console's live preview of a team's brand: the subject's page and the subject's mail of a
 * sample case, drawn by the very renderers subjects get, in the team's default language (else
 * DEFAULT_LOCALE). Shown in a sandboxed frame that runs no script.
 */
export function brandingPreview(
  team: TeamPresentation,
  options: { pageBase: string; fallbackLocale: Parameters<typeof translator>[0]; now: Date },
): { page: string; mail: string } {
  const found = sampleCase(team, options.now);
  const t = translator(team.defaultLocale ?? options.fallbackLocale);
  const page = renderCasePage({
    found,
    now: options.now,
    identityFlow: 'upload',
    standIns: [],
    closedPageOffers: [],
    providerFlow: null,
    frame: { t, team, path: '/v/preview', languages: { chooser: '/v/preview/language' }, cookies: [] },
    csrf: 'preview',
    notice: null,
  });
  const mail = emailLinkMail(
    {
      caseId: 'preview',
      publicId: 'preview',
      pageBase: options.pageBase,
      livemode: true,
      subjectEmail: found.record.subjectEmail,
      subjectName: found.record.subjectName,
      expiresAt: found.record.expiresAt,
      manager: null,
      locale: null,
      defaultLocale: options.fallbackLocale,
    },
    team,
    `${options.pageBase}/v/preview/email/preview`,
  );
  return { page: page.html, mail: mail?.html ?? '' };
}
