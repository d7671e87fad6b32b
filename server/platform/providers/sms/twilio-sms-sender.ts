import type { SmsSender } from './sms-sender';

export interface TwilioConfig {
  accountSid: string;
  authToken: string;
  from: string;
  /** https://api.twilio.com, or a stand-in that speaks the same API. */
  apiBase: string;
  timeoutMs?: number;
}

/**
 * Twilio's Messages API as documented: POST /2010-04-01/Accounts/{AccountSid}/Messages.json with a
 * form-encoded To/From/Body, HTTP basic auth (Account SID : Auth Token). A 201 means Twilio queued
 * the message; anything else is an error whose `code`/`message` Twilio puts in the JSON body.
 */
export function createTwilioSmsSender(config: TwilioConfig): SmsSender {
  const url = `${config.apiBase.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(config.accountSid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${config.accountSid}:${config.authToken}`).toString('base64')}`;
  return {
    async send({ to, body }) {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          Authorization: authorization,
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
        },
        body: new URLSearchParams({ To: to, From: config.from, Body: body }),
        signal: AbortSignal.timeout(config.timeoutMs ?? 10_000),
        redirect: 'error',
      });
      if (response.status === 200 || response.status === 201) return;
      let detail = '';
      try {
        const error = (await response.json()) as { code?: number; message?: string };
        detail = `${error.code ?? ''} ${error.message ?? ''}`.trim();
      } catch {
        // not JSON: the status says enough
      }
      throw new Error(`Twilio answered ${response.status}${detail ? `: ${detail}` : ''}`);
    },
  };
}
