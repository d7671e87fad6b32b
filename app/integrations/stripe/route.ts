import { eq } from 'drizzle-orm';
import { clockNow, database, jobProducer, loadCase, providers } from '@/app/v/_ui/route-kit';
import { cases } from '@/db/schema';
import { toWireError } from '@/server/api/error-table';
import { API_BODY_LIMIT_BYTES, readRequestBody } from '@/server/api/http/request-body';
import { errorFields, logger } from '@/server/platform/logger';
import { syncIdentitySession } from '@/server/verification/methods/government-id/step';

export const dynamic = 'force-dynamic';

/**
 * Stripe's webhook for Identity sessions. The signature is checked by the SDK (constructEvent);
 * the result is then fetched from Stripe for the session the case stored, so a replayed or stale
 * event cannot set an outcome of its own.
 */
export async function POST(request: Request): Promise<Response> {
  // Stripe only ever sees live cases: test-mode cases use the simulated provider.
  const provider = (await providers(true)).identity;
  if (provider.kind !== 'redirect') return new Response(null, { status: 404 });
  let raw: string;
  try {
    raw = new TextDecoder().decode(await readRequestBody(request, API_BODY_LIMIT_BYTES));
  } catch (error) {
    const wire = toWireError(error);
    return Response.json(wire.body, { status: wire.status, headers: wire.headers });
  }
  let parsed: { sessionId: string; caseId: string } | null;
  try {
    parsed = provider.parseWebhook(raw, request.headers.get('stripe-signature') ?? '');
  } catch {
    return Response.json({ error: 'invalid signature' }, { status: 400 });
  }
  if (!parsed) return Response.json({ received: true });
  const db = await database();
  const caseId = parsed.caseId;
  if (!/^[0-9a-f-]{36}$/i.test(caseId)) return Response.json({ received: true });
  const [row] = await db.select({ publicId: cases.publicId }).from(cases).where(eq(cases.id, caseId));
  const found = row ? await loadCase(row.publicId) : null;
  if (!found) return Response.json({ received: true });
  try {
    await syncIdentitySession(db, await jobProducer(), {
      record: found.record,
      provider,
      now: await clockNow(),
    });
  } catch (error) {
    logger.error('stripe webhook could not be applied', { case_id: caseId, ...errorFields(error) });
    // Stripe retries non-2xx deliveries.
    return Response.json({ error: 'temporarily unavailable' }, { status: 503 });
  }
  return Response.json({ received: true });
}
