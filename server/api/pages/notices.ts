/**
 * Results of a form, carried across the redirect as a short code (`?n=`) and shown from this fixed
 * table, so nothing a visitor puts in the URL is ever echoed into the page.
 */
const NOTICES = {
  'email-verified': { text: 'Thank you, your e-mail address is confirmed.', error: false },
  'email-invalid': {
    text: 'That e-mail link no longer works: it was used already, or replaced by a newer one. Use the link in the latest e-mail.',
    error: true,
  },
  'sms-sent': { text: 'We sent a 6-digit code by text message. It is valid for 10 minutes.', error: false },
  'sms-invalid-phone': {
    text: 'That does not look like a valid mobile number. Include the country code, for example +44 7911 123456.',
    error: true,
  },
  'sms-too-soon': { text: 'Please wait 30 seconds before asking for another code.', error: true },
  'sms-too-many': { text: 'No more codes can be sent for this verification.', error: true },
  'sms-send-failed': {
    text: 'We could not send the text message. Please try again in a moment.',
    error: true,
  },
  'sms-malformed': { text: 'Enter the 6 digits of the code.', error: true },
  'sms-expired': { text: 'That code has expired. Ask for a new one.', error: true },
  'sms-no-code': { text: 'Ask for a code first.', error: true },
  'sms-wrong': { text: 'That code is not right.', error: true },
  'sms-verified': { text: 'Thank you, your phone number is confirmed.', error: false },
  'question-empty': { text: 'Please type your answer.', error: true },
  'question-wrong': { text: 'That answer is not right.', error: true },
  'question-verified': { text: 'Thank you, your answer is confirmed.', error: false },
  'identity-verified': { text: 'Thank you, your ID and selfie are confirmed.', error: false },
  'identity-rejected': { text: 'Your ID or selfie could not be confirmed.', error: true },
  'identity-pending': { text: 'We are waiting for the result of your ID check.', error: false },
  'identity-missing': { text: 'Choose a picture of your ID and a selfie.', error: true },
  'identity-too-large': { text: 'Each picture must be smaller than 10 MB.', error: true },
  'identity-unavailable': {
    text: 'The ID check is not available right now. Please try again later.',
    error: true,
  },
  'form-expired': { text: 'This form had expired. Please try again.', error: true },
  unavailable: { text: 'This step can no longer be changed.', error: true },
  'manager-confirmed': { text: 'Thank you, you confirmed this person.', error: false },
  'manager-declined': { text: 'You declined this request. The verification has been stopped.', error: false },
} as const;

export type NoticeCode = keyof typeof NOTICES;

export function noticeFor(code: string | null, left: string | null): { text: string; error: boolean } | null {
  if (!code || !(code in NOTICES)) return null;
  const notice = NOTICES[code as NoticeCode];
  const remaining = Number(left);
  if (Number.isInteger(remaining) && remaining > 0 && remaining < 10 && notice.error) {
    return {
      text: `${notice.text} ${remaining} ${remaining === 1 ? 'attempt' : 'attempts'} left.`,
      error: true,
    };
  }
  return notice;
}

export function withNotice(path: string, code: NoticeCode, left?: number): string {
  const params = new URLSearchParams({ n: code });
  if (left !== undefined) params.set('l', String(left));
  return `${path}?${params.toString()}#notice`;
}
