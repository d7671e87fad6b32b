import { postIdentityUpload } from '@/server/api/pages/identity-handlers';

export const dynamic = 'force-dynamic';

/**
 * Upload flow (simulated provider): the two pictures are read into memory, checked and dropped;
 * nothing is written to disk or the database.
 */
export async function POST(request: Request, context: { params: Promise<{ publicId: string }> }) {
  return postIdentityUpload(request, await context.params);
}
