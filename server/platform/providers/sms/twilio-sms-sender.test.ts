import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTwilioStandIn, type TwilioStandIn } from '@/test/support/twilio-stand-in';
import { createTwilioSmsSender } from './twilio-sms-sender';

const CASE_ID = '00000000-0000-4000-8000-000000000001';

let twilio: TwilioStandIn;

beforeAll(async () => {
  twilio = await startTwilioStandIn();
});

afterAll(async () => {
  await twilio?.close();
});

describe('Twilio SMS adapter (against a stand-in speaking the Messages API)', () => {
  it('posts To/From/Body form-encoded with basic auth to the account Messages resource', async () => {
    const sender = createTwilioSmsSender({
      accountSid: twilio.accountSid,
      authToken: twilio.authToken,
      from: '+15005550006',
      apiBase: twilio.url,
    });
    await sender.send({ to: '+447911123456', body: '123456 is your code', caseId: CASE_ID });
    expect(twilio.messages.at(-1)).toMatchObject({
      to: '+447911123456',
      from: '+15005550006',
      body: '123456 is your code',
    });
  });

  it("throws with Twilio's error code when credentials are wrong", async () => {
    const sender = createTwilioSmsSender({
      accountSid: twilio.accountSid,
      authToken: 'wrong',
      from: '+15005550006',
      apiBase: twilio.url,
    });
    await expect(sender.send({ to: '+447911123456', body: 'x', caseId: CASE_ID })).rejects.toThrow(
      /401: 20003 Authenticate/,
    );
  });

  it('throws when Twilio refuses the number', async () => {
    const sender = createTwilioSmsSender({
      accountSid: twilio.accountSid,
      authToken: twilio.authToken,
      from: '+15005550006',
      apiBase: twilio.url,
    });
    await expect(sender.send({ to: 'not-a-number', body: 'x', caseId: CASE_ID })).rejects.toThrow(
      /400: 21211/,
    );
  });
});
