import type { Queryable } from '@/db/client';
import type { Env } from '@/server/platform/env';
import { createDevSmsSender } from './dev-sms-sender';
import type { SmsSender } from './sms-sender';
import { createTwilioSmsSender } from './twilio-sms-sender';

/**
 * The adapter the operator chose (SMS_PROVIDER); Twilio's settings are checked here. `db` is
 * where the dev transport keeps its messages.
 */
export function smsSenderFromEnv(config: Env, db: Queryable): SmsSender {
  if (config.SMS_PROVIDER === 'dev') return createDevSmsSender(db);
  const { TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM } = config;
  if (!TWILIO_ACCOUNT_SID || !TWILIO_AUTH_TOKEN || !TWILIO_FROM) {
    throw new Error('SMS_PROVIDER=twilio needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM');
  }
  return createTwilioSmsSender({
    accountSid: TWILIO_ACCOUNT_SID,
    authToken: TWILIO_AUTH_TOKEN,
    from: TWILIO_FROM,
    apiBase: config.TWILIO_API_BASE,
  });
}
