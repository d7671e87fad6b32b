import { withNotice } from '@/app/v/_ui/notices';
import { seeOther } from '@/app/v/_ui/respond';
import { caseRoute, clockNow, database, jobProducer, providers } from '@/app/v/_ui/route-kit';
import { errorFields, logger } from '@/server/platform/logger';
import { syncIdentitySession } from '@/server/verification/methods/government-id/step';

export const dynamic = 'force-dynamic';

/**
 * Where the provider sends the subject back. The result is fetched from the provider for the
 * session stored on the case (nothing in this request is trusted); if it is not ready yet, the
 * webhook settles it and the page's live updates show it.
 */
export const GET = caseRoute(async ({ found, back }) => {
  const provider = (await providers(found.record.livemode)).identity;
  if (provider.kind !== 'redirect') return seeOther(back);
  try {
    const result = await syncIdentitySession(await database(), await jobProducer(), {
      record: found.record,
      provider,
      now: await clockNow(),
    });
    if (result?.outcome === 'verified') return seeOther(withNotice(back, 'identity-verified'));
    if (result?.outcome === 'rejected') return seeOther(withNotice(back, 'identity-rejected'));
    return seeOther(result ? withNotice(back, 'identity-pending') : back);
  } catch (error) {
    logger.error('identity result could not be fetched', { case_id: found.record.id, ...errorFields(error) });
    return seeOther(withNotice(back, 'identity-pending'));
  }
});
