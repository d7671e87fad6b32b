import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { Db } from '@/db/client';
import type { CaseRecord } from '@/server/cases/case-record';
import { lockCaseForUpdate } from '@/server/cases/case-repository';
import { keepVendorCopy } from '@/server/cases/vendor-copies';
import { type MessageLocale, translator } from '@/server/i18n/translator';
import type { JobProducer } from '@/server/platform/jobs/producers';
import type { SmsSender } from '@/server/platform/providers/sms/sms-sender';
import type { VendorCopy } from '@/server/platform/providers/vendor-copy';
import type { TeamPresentation } from '@/server/teams/presentation';
import { isActionable } from '@/server/verification/case-state';
import { checkGuess, type GuessResult } from '@/server/verification/check-guess';
import { mergeStepSettings, settingString, stepOf } from '@/server/verification/step-settings';
import { SMS_CODE_TTL_MINUTES, smsCodeText } from './code-text';

/** The number the subject last had a code sent to (E.164), or null. */
export function phoneOnFile(record: CaseRecord): string | null {
  return settingString(record, 'sms', 'phone_e164');
}

export const SMS_CODE_TTL_SECONDS = SMS_CODE_TTL_MINUTES * 60;
/** A new code (to the same or another number) at most every 30 s, and 5 in all per case. */
export const SMS_RESEND_INTERVAL_SECONDS = 30;
export const SMS_MAX_SENDS = 5;

/** "+44 7700 900123", "0044…" and friends → E.164, or null when it is not a valid mobile-capable number. */
export function toE164(input: string): string | null {
  const cleaned = input.trim().replace(/^00/, '+');
  if (cleaned.length > 32) return null;
  const phone = parsePhoneNumberFromString(cleaned);
  return phone?.isValid() ? phone.number : null;
}

function codeHash(code: string, salt: string): string {
  return createHmac('sha256', Buffer.from(salt, 'base64')).update(code).digest('hex');
}

export type SendCodeResult =
  | { ok: true; phoneLast4: string }
  | { ok: false; why: 'invalid_phone' | 'too_many' | 'unavailable' | 'send_failed' }
  | { ok: false; why: 'too_soon'; retryAfterSeconds: number };

/** The code every test-mode case's SMS step takes, so a test can type it without reading a phone. */
export const TEST_MODE_SMS_CODE = '000000';

/**
 * Issues a fresh 6-digit code to `phoneInput` (replacing any earlier code) and sends it. The code
 * is stored only as an HMAC with a per-code salt, valid for 10 minutes. Sending happens after the
 * commit, so a slow SMS provider never holds the case lock.
 */
export async function sendSmsCode(
  db: Db,
  jobs: JobProducer,
  input: {
    caseId: string;
    /** A test-mode case's code is always TEST_MODE_SMS_CODE (and its sender the dev mailbox). */
    livemode: boolean;
    phoneInput: string;
    team: TeamPresentation;
    /** The language of the text: the case's, else the team's default, else DEFAULT_LOCALE. */
    locale: MessageLocale;
    now: Date;
    sender: SmsSender;
  },
): Promise<SendCodeResult> {
  const { caseId, now } = input;
  const phone = toE164(input.phoneInput);
  if (!phone) return { ok: false, why: 'invalid_phone' };
  const code = input.livemode ? randomInt(0, 1_000_000).toString().padStart(6, '0') : TEST_MODE_SMS_CODE;

  const issued = await db.transaction(async (tx): Promise<SendCodeResult> => {
    const record = await lockCaseForUpdate(tx, caseId);
    if (!record || !isActionable(record, now) || stepOf(record, 'sms')?.state !== 'pending') {
      return { ok: false, why: 'unavailable' };
    }
    const sentAt = (stepOf(record, 'sms')?.settings.sent_at as string[] | undefined) ?? [];
    if (sentAt.length >= SMS_MAX_SENDS) return { ok: false, why: 'too_many' };
    const last = sentAt.at(-1);
    const wait = last ? SMS_RESEND_INTERVAL_SECONDS - (now.getTime() - Date.parse(last)) / 1000 : 0;
    if (wait > 0) return { ok: false, why: 'too_soon', retryAfterSeconds: Math.ceil(wait) };

    const salt = randomBytes(16).toString('base64');
    await mergeStepSettings(
      tx,
      caseId,
      'sms',
      {
        phone_e164: phone,
        phone_last4: phone.slice(-4),
        code_hash: codeHash(code, salt),
        code_salt: salt,
        code_expires_at: new Date(now.getTime() + SMS_CODE_TTL_SECONDS * 1000).toISOString(),
        sent_at: [...sentAt, now.toISOString()],
      },
      now,
    );
    return { ok: true, phoneLast4: phone.slice(-4) };
  });
  if (!issued.ok) return issued;

  let copy: VendorCopy | null;
  try {
    copy = await input.sender.send({
      caseId,
      to: phone,
      body: smsCodeText(translator(input.locale), { teamName: input.team.name, code }),
    });
  } catch {
    return { ok: false, why: 'send_failed' };
  }
  // The vendor's log now holds the number and the text: kept by its id, for redaction to erase.
  if (copy) await keepVendorCopy(db, jobs, caseId, copy);
  return issued;
}

/** Checks a code the subject typed. Expired or malformed input spends no attempt. */
export async function checkSmsCode(
  db: Db,
  jobs: JobProducer,
  record: CaseRecord,
  codeInput: string,
  now: Date,
): Promise<GuessResult | { result: 'malformed' | 'no_code' | 'expired' }> {
  const code = codeInput.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(code)) return { result: 'malformed' };
  const hash = settingString(record, 'sms', 'code_hash');
  const salt = settingString(record, 'sms', 'code_salt');
  const expiresAt = settingString(record, 'sms', 'code_expires_at');
  if (!hash || !salt || !expiresAt) return { result: 'no_code' };
  if (Date.parse(expiresAt) <= now.getTime()) return { result: 'expired' };
  return checkGuess(db, jobs, {
    caseId: record.id,
    method: 'sms',
    now,
    isCorrect: async () =>
      timingSafeEqual(Buffer.from(codeHash(code, salt), 'hex'), Buffer.from(hash, 'hex')),
    // A code proves the phone once; it cannot be replayed.
    onCorrect: (tx) => mergeStepSettings(tx, record.id, 'sms', { code_hash: null, code_salt: null }, now),
  });
}
