import { type VendorErasure, VendorError } from '@/server/platform/providers/vendor-copy';
import type { SmsSender } from './sms-sender';

export interface TwilioConfig {
  accountSid: string;
  authToken: string;
  from: string;
  /** https://api.twilio.com, or a stand-in that speaks the same API. */
  apiBase: string;
  timeoutMs?: number;
}

/** Twilio's error JSON (`{code, message, more_info, status}`), when the body is one. */
async function twilioError(response: Response): Promise<{ code?: number; message?: string }> {
  try {
    return (await response.json()) as { code?: number; message?: string };
  } catch {
    return {};
  }
}

/**
 * Twilio's Messages API as documented: POST /2010-04-01/Accounts/{AccountSid}/Messages.json with a
 * form-encoded To/From/Body, HTTP basic auth (Account SID : Auth Token). A 201 means Twilio queued
 * the message; anything else is an error whose `code`/`message` Twilio puts in the JSON body.
 * Twilio keeps every message (number and text) in the account's log until it is deleted: DELETE
 * …/Messages/{Sid}.json answers 204, and refuses (error 20009) while the message is still being
 * sent, which can last minutes and, rarely, days.
 */
export function createTwilioSmsSender(config: TwilioConfig): SmsSender {
  const messages = `${config.apiBase.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(config.accountSid)}/Messages`;
  const authorization = `Basic ${Buffer.from(`${config.accountSid}:${config.authToken}`).toString('base64')}`;
  const timeout = () => AbortSignal.timeout(config.timeoutMs ?? 10_000);
  return {
    async send({ to, body }) {
      const response = await fetch(`${messages}.json`, {
        method: 'POST',
        headers: {
          Authorization: authorization,
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
        },
        body: new URLSearchParams({ To: to, From: config.from, Body: body }),
        signal: timeout(),
        redirect: 'error',
      });
      if (response.status === 200 || response.status === 201) {
        const { sid } = (await response.json()) as { sid?: unknown };
        if (typeof sid !== 'string')
          throw new Error(`Twilio answered ${response.status} without a message sid`);
        return { kind: 'twilio.message', vendorId: sid };
      }
      const error = await twilioError(response);
      const detail = `${error.code ?? ''} ${error.message ?? ''}`.trim();
      throw new Error(`Twilio answered ${response.status}${detail ? `: ${detail}` : ''}`);
    },

    copies: {
      kind: 'twilio.message',
      async erase(sid): Promise<VendorErasure> {
        let response: Response;
        try {
          response = await fetch(`${messages}/${encodeURIComponent(sid)}.json`, {
            method: 'DELETE',
            headers: { Authorization: authorization, Accept: 'application/json' },
            signal: timeout(),
            redirect: 'error',
          });
        } catch (error) {
          throw new VendorError(`Twilio could not be reached (${(error as Error).name})`);
        }
        if (response.status === 204 || response.status === 200) return 'erased';
        if (response.status === 404) return 'absent';
        // Only its code: Twilio's message text may quote the number.
        const { code } = await twilioError(response);
        throw new VendorError(`Twilio answered ${response.status}${code ? ` (error ${code})` : ''}`);
      },
    },
  };
}
