import { beginProviderFlow } from '@/server/api/pages/flow-begin-handler';

export const dynamic = 'force-dynamic';

/** The one-time link an identity provider's flow enters by: it binds the flow to this browser. */
export async function GET(request: Request, context: { params: Promise<{ publicId: string }> }) {
  return beginProviderFlow(request, await context.params);
}
