import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { MethodEvidence } from '@/server/verification/methods/evidence-reference';
import { stringSetting } from '@/server/verification/methods/output';

/** The phone the code went to: its country (ISO 3166-1 alpha-2) and last four digits, never the number. */
export const smsEvidence: MethodEvidence = {
  read: (_record, step) => {
    const phone = stringSetting(step.settings, 'phone_e164');
    return {
      phone_country: phone ? (parsePhoneNumberFromString(phone)?.country ?? null) : null,
      phone_last4: stringSetting(step.settings, 'phone_last4'),
    };
  },
  personal: ['phone_last4'],
};
