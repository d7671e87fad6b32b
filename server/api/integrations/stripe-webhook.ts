import { toWireError } from '@/server/api/error-table';
import { API_BODY_LIMIT_BYTES, readRequestBody } from '@/server/api/http/request-body';
import { settleIdentityWebhook } from '@/server/application/verification/identity-check';
import { identityFlowOf } from '@/server/application/verification/subject-deps';
import { runtime } from '@/server/platform/runtime';

/** POST /integrations/stripe: Stripe's webhook for Identity sessions. */
export async function handleStripeWebhook(request: Request): Promise<Response> {
  const rt = await runtime();
  const deps = { db: rt.database.db, clock: rt.clock, jobs: rt.jobProducer, providers: rt.providers };
  // Stripe only ever sees live cases: test-mode cases use the simulated provider.
  if (identityFlowOf(deps, true) !== 'redirect') return new Response(null, { status: 404 });
  let rawBody: string;
  try {
    rawBody = new TextDecoder().decode(await readRequestBody(request, API_BODY_LIMIT_BYTES));
  } catch (error) {
    const wire = toWireError(error);
    return Response.json(wire.body, { status: wire.status, headers: wire.headers });
  }
  const outcome = await settleIdentityWebhook(deps, {
    rawBody,
    signature: request.headers.get('stripe-signature') ?? '',
  });
  switch (outcome) {
    case 'not_offered':
      return new Response(null, { status: 404 });
    case 'invalid_signature':
      return Response.json({ error: 'invalid signature' }, { status: 400 });
    case 'failed':
      // Stripe retries non-2xx deliveries.
      return Response.json({ error: 'temporarily unavailable' }, { status: 503 });
    default:
      return Response.json({ received: true });
  }
}
