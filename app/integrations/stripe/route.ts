import { handleStripeWebhook } from '@/server/api/integrations/stripe-webhook';

export const dynamic = 'force-dynamic';

/**
 * Stripe's webhook for Identity sessions. The signature is checked by the SDK (constructEvent);
 * the result is then fetched from Stripe for the session the case stored, so a replayed or stale
 * event cannot set an outcome of its own.
 */
export function POST(request: Request): Promise<Response> {
  return handleStripeWebhook(request);
}
