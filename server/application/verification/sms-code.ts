import type { VerificationCase } from '@/server/cases/case-repository';
import { writtenLocale } from '@/server/i18n/choose-locale';
import type { MessageLocale } from '@/server/i18n/translator';
import type { GuessResult } from '@/server/verification/check-guess';
import {
  checkSmsCode,
  phoneOnFile,
  type SendCodeResult,
  sendSmsCode,
} from '@/server/verification/methods/sms/step';
import { providersFor, type SubjectStepDeps } from './subject-deps';

/**
 * The subject asks for a code by text message: to the number they typed, or (`resend`) again to
 * the number the last code went to.
 */
export function requestSmsCode(
  deps: SubjectStepDeps,
  found: VerificationCase,
  input: ({ resend: true } | { resend: false; phone: string }) & { defaultLocale: MessageLocale },
): Promise<SendCodeResult> {
  const { record } = found;
  return sendSmsCode(deps.db, deps.jobs, {
    caseId: record.id,
    livemode: record.livemode,
    phoneInput: input.resend ? (phoneOnFile(record) ?? '') : input.phone,
    team: found.team,
    locale: writtenLocale(record.locale, found.team.defaultLocale, input.defaultLocale),
    now: deps.clock(),
    sender: providersFor(deps, record.livemode).sms,
  });
}

/** The subject types the code they received. */
export function submitSmsCode(
  deps: SubjectStepDeps,
  found: VerificationCase,
  code: string,
): Promise<GuessResult | { result: 'malformed' | 'no_code' | 'expired' }> {
  return checkSmsCode(deps.db, deps.jobs, found.record, code, deps.clock());
}
