import { systemClock } from '@/server/lib/clock';
import { confirmEmailLink } from '@/server/verification/email-step';
import { withNotice } from '../../../_ui/notices';
import { notFoundPage, seeOther } from '../../../_ui/respond';
import { database, loadCase } from '../../../_ui/route-kit';

export const dynamic = 'force-dynamic';

/**
 * The link mailed to the subject. Opening it is the proof of the mailbox, so it verifies on GET
 * (a mail client cannot submit a form); its token works once.
 */
export async function GET(
  _request: Request,
  context: { params: Promise<{ publicId: string; token: string }> },
): Promise<Response> {
  const { publicId, token } = await context.params;
  const found = await loadCase(publicId);
  if (!found) return notFoundPage();
  const back = `/v/${publicId}`;
  const result = await confirmEmailLink(await database(), found, token, systemClock());
  if (result === 'verified') return seeOther(withNotice(back, 'email-verified'));
  if (result === 'invalid') return seeOther(withNotice(back, 'email-invalid'));
  return seeOther(back);
}
