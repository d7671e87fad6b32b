import { returnFromIdentity } from '@/server/api/pages/identity-handlers';

export const dynamic = 'force-dynamic';

/** Where the provider sends the subject back; the result is fetched from the provider, never taken from the request. */
export async function GET(request: Request, context: { params: Promise<{ publicId: string }> }) {
  return returnFromIdentity(request, await context.params);
}
