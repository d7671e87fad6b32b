import { startIdentity } from '@/server/api/pages/identity-handlers';

export const dynamic = 'force-dynamic';

/** Redirect flow (Stripe Identity): opens or resumes the provider's session and sends the subject there. */
export async function GET(request: Request, context: { params: Promise<{ publicId: string }> }) {
  return startIdentity(request, await context.params);
}
