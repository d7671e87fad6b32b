import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { deliveryHeaders, newSigningSecret, serviceSignature, standardWebhookSignature } from './signature';

/**
 * A delivery's signatures, against answers computed here with node:crypto as the spec and Standard
 * Webhooks define them, and against Standard Webhooks' reference library, which receivers use.
 */
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const BODY = '{"id":"evt_1","type":"case.created","data":{"case_id":"c"}}';

describe('webhook signatures', () => {
  it('a new secret is whsec_ and 32 random bytes in standard base64', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(secret);
  });

  it('X-Service-Signature is sha256= and the hex HMAC-SHA256 of the body under the secret as given', () => {
    expect(serviceSignature(SECRET, BODY)).toBe(
      `sha256=${createHmac('sha256', SECRET).update(BODY).digest('hex')}`,
    );
  });

  it('webhook-signature is v1, and the base64 HMAC of id.timestamp.body under the decoded secret; the reference library verifies it', () => {
    const signature = standardWebhookSignature(SECRET, 'dlv_1', 1_800_000_000, BODY);
    expect(signature).toBe(
      `v1,${createHmac('sha256', Buffer.alloc(32, 7)).update(`dlv_1.1800000000.${BODY}`).digest('base64')}`,
    );
    // A secret issued in base64url keeps signing with the same bytes.
    const urlSafe = `whsec_${Buffer.from([251, 255, ...Buffer.alloc(30, 1)]).toString('base64url')}`;
    expect(standardWebhookSignature(urlSafe, 'a', 1, 'b')).toBe(
      standardWebhookSignature(urlSafe.replace(/-/g, '+').replace(/_/g, '/'), 'a', 1, 'b'),
    );
  });

  it('a delivery carries the spec’s headers and the Standard Webhooks trio, which the reference library verifies', () => {
    const now = new Date('2027-01-15T08:00:00.999Z');
    const headers = deliveryHeaders({
      secret: SECRET,
      body: BODY,
      eventType: 'case.created',
      deliveryId: 'dlv_9',
      now,
    });
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'Service-Webhook/1.0',
      'X-Service-Signature': serviceSignature(SECRET, BODY),
      'X-Service-Event': 'case.created',
      'X-Service-Delivery': 'dlv_9',
      'webhook-id': 'dlv_9',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': standardWebhookSignature(SECRET, 'dlv_9', Math.floor(now.getTime() / 1000), BODY),
    });
    const verified = new Webhook(SECRET).verify(BODY, {
      'webhook-id': headers['webhook-id'] ?? '',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': standardWebhookSignature(SECRET, 'dlv_9', Math.floor(Date.now() / 1000), BODY),
    });
    expect(verified).toEqual(JSON.parse(BODY));
  });
});
