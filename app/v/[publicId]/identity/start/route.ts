import { withNotice } from '@/app/v/_ui/notices';
import { seeOther } from '@/app/v/_ui/respond';
import { caseRoute, clockNow, database, jobProducer, providers } from '@/app/v/_ui/route-kit';
import { env } from '@/server/platform/env';
import { errorFields, logger } from '@/server/platform/logger';
import { startIdentitySession } from '@/server/verification/methods/government-id/step';

export const dynamic = 'force-dynamic';

/**
 * Redirect flow (Stripe Identity): opens or resumes the provider's session and sends the subject
 * there. A plain link, not a form: it changes nothing on our side but the stored session id.
 */
export const GET = caseRoute(async ({ found, back, publicId }) => {
  const provider = (await providers(found.record.livemode)).identity;
  if (provider.kind !== 'redirect') return seeOther(back);
  try {
    const url = await startIdentitySession(await database(), await jobProducer(), {
      record: found.record,
      provider,
      returnUrl: `${env().VERIFY_URL_BASE}/v/${publicId}/identity/return`,
      now: await clockNow(),
    });
    return seeOther(url ?? back);
  } catch (error) {
    logger.error('identity session could not start', { case_id: found.record.id, ...errorFields(error) });
    return seeOther(withNotice(back, 'identity-unavailable'));
  }
});
