import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VendorError } from '@/server/platform/providers/vendor-copy';
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

describe('Twilio message deletion (redaction)', () => {
  const sender = () =>
    createTwilioSmsSender({
      accountSid: twilio.accountSid,
      authToken: twilio.authToken,
      from: '+15005550006',
      apiBase: twilio.url,
    });

  it('returns the message sid from sending, and deletes that message from the log once', async () => {
    const copy = await sender().send({ to: '+447911123456', body: '654321 is your code', caseId: CASE_ID });
    const sent = twilio.messages.at(-1);
    expect(copy).toEqual({ kind: 'twilio.message', vendorId: sent?.sid });
    expect(await sender().copies?.erase(sent?.sid ?? '')).toBe('erased');
    expect(twilio.messages.at(-1)?.deleted).toBe(true);
    expect(twilio.requests.at(-1)).toEqual({
      method: 'DELETE',
      path: `/2010-04-01/Accounts/${twilio.accountSid}/Messages/${sent?.sid}.json`,
    });
    // Gone already: nothing left to erase.
    expect(await sender().copies?.erase(sent?.sid ?? '')).toBe('absent');
  });

  it('is refused while the message is still being sent (20009), saying so without the number', async () => {
    twilio.holdSending = true;
    try {
      const copy = await sender().send({ to: '+447911123456', body: '111111 is your code', caseId: CASE_ID });
      const refused = sender().copies?.erase(copy?.vendorId ?? '');
      await expect(refused).rejects.toThrow(VendorError);
      await expect(refused).rejects.toThrow('Twilio answered 409 (error 20009)');
      await expect(refused).rejects.not.toThrow(/7911/);
      twilio.finishSending();
      expect(await sender().copies?.erase(copy?.vendorId ?? '')).toBe('erased');
    } finally {
      twilio.holdSending = false;
    }
  });

  it('throws a VendorError while Twilio cannot be reached', async () => {
    const copy = await sender().send({ to: '+447911123456', body: '222222 is your code', caseId: CASE_ID });
    await twilio.down();
    try {
      await expect(sender().copies?.erase(copy?.vendorId ?? '')).rejects.toThrow(
        /^Twilio could not be reached/,
      );
    } finally {
      await twilio.up();
    }
    expect(await sender().copies?.erase(copy?.vendorId ?? '')).toBe('erased');
  });
});
