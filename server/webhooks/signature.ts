import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** `whsec_` + 32 random bytes in base64url: the Standard Webhooks secret format. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
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
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64url');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
