import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/**
 * `whsec_` + 32 random bytes in standard base64: the Standard Webhooks secret format, which its
 * reference library (`standardwebhooks`) decodes as base64 and refuses otherwise.
 */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** `X-Service-Signature`: HMAC-SHA256 of the exact body, keyed with the secret string as given. */
export function serviceSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * Standard Webhooks `webhook-signature`: HMAC-SHA256 of `id.timestamp.body`, keyed with the
 * secret's decoded bytes (the part after `whsec_`), base64, prefixed `v1,`.
 */
export function standardWebhookSignature(
  secret: string,
  id: string,
  timestamp: number,
  body: string,
): string {
  // Node's base64 decoder also reads the base64url alphabet, so secrets issued before the switch
  // to standard base64 keep signing with the same key bytes until they are rotated.
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * Every header a delivery carries: the spec's `X-Service-*` and the Standard Webhooks trio, signed
 * with `secret` over the exact `body`. The worker's attempts and the `listen` tool send these.
 */
export function deliveryHeaders(delivery: {
  secret: string;
  body: string;
  eventType: string;
  deliveryId: string;
  now: Date;
}): Record<string, string> {
  const timestamp = Math.floor(delivery.now.getTime() / 1000);
  return {
    'Content-Type': 'application/json',
    'User-Agent': 'Service-Webhook/1.0',
    'X-Service-Signature': serviceSignature(delivery.secret, delivery.body),
    'X-Service-Event': delivery.eventType,
    'X-Service-Delivery': delivery.deliveryId,
    'webhook-id': delivery.deliveryId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardWebhookSignature(
      delivery.secret,
      delivery.deliveryId,
      timestamp,
      delivery.body,
    ),
  };
}
