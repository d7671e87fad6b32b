import type { MessageKey } from '@/server/i18n/catalogues';
import type { Translator } from '@/server/i18n/translator';
import { MAX_IMAGE_BYTES } from '@/server/verification/methods/government-id/step';
import { PHONE_EXAMPLE } from '@/server/verification/methods/sms/page-section';

/**
 * Results of a form, carried across the redirect as a short code (`?n=`) and shown from this fixed
 * table (each a message of the catalogue, `notice.<code>`), so nothing a visitor puts in the URL
 * is ever echoed into the page. `error`: said as an alert, in the error style.
 */
const NOTICES = {
  'email-verified': false,
  'email-invalid': true,
  'sms-sent': false,
  'sms-invalid-phone': true,
  'sms-too-soon': true,
  'sms-too-many': true,
  'sms-send-failed': true,
  'sms-malformed': true,
  'sms-expired': true,
  'sms-no-code': true,
  'sms-wrong': true,
  'sms-verified': false,
  'question-empty': true,
  'question-wrong': true,
  'question-verified': false,
  'identity-verified': false,
  'identity-rejected': true,
  'identity-pending': false,
  'identity-missing': true,
  'identity-too-large': true,
  'identity-unavailable': true,
  'form-expired': true,
  unavailable: true,
  'manager-confirmed': false,
  'manager-declined': false,
} as const satisfies Record<string, boolean>;

export type NoticeCode = keyof typeof NOTICES;

export interface Notice {
  text: string;
  error: boolean;
}

/** The values a notice's message quotes. */
const NOTICE_VALUES = {
  example: PHONE_EXAMPLE,
  megabytes: MAX_IMAGE_BYTES / (1024 * 1024),
};

/** A code's message: one missing from the catalogue fails the type check here. */
const noticeKey = (code: NoticeCode): MessageKey => `notice.${code}`;

export function noticeFor(t: Translator, code: string | null, left: string | null): Notice | null {
  if (!code || !Object.hasOwn(NOTICES, code)) return null;
  const error = NOTICES[code as NoticeCode];
  const text = t.text(noticeKey(code as NoticeCode), NOTICE_VALUES);
  const remaining = Number(left);
  if (Number.isInteger(remaining) && remaining > 0 && remaining < 10 && error) {
    const second = t.text('step.attemptsLeft', { left: remaining });
    return { text: t.text('page.twoSentences', { first: text, second }), error };
  }
  return { text, error };
}

export function withNotice(path: string, code: NoticeCode, left?: number): string {
  const params = new URLSearchParams({ n: code });
  if (left !== undefined) params.set('l', String(left));
  return `${path}?${params.toString()}#notice`;
}
